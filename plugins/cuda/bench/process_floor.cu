/*
 * process_floor.cu — what any process that starts CUDA pays on this
 * machine, whatever it computes: the driver's initialisation, the primary
 * context, one kernel, and the process's end (the driver tearing the
 * context down). It prints one line to standard error at each step, as the
 * step ends; bench/process_timeline.py stamps the lines and the exit
 * with the seconds since the process started:
 *
 *   process_timeline.py --runs 7 -- build/plugins/cuda/cuda_process_floor [exit]
 *
 * With `exit` it leaves through _exit(0) after the last line, skipping the
 * runtime's own teardown (atexit), to tell that from the driver's. Linked
 * with the static runtime, as topoml-backend-cuda is. A benchmark, not a
 * test: it prints timings, and 1 when a CUDA call fails.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__global__ void touch(int *p)
{
    p[threadIdx.x] = (int)threadIdx.x;
}

static int check(cudaError_t err, const char *what)
{
    if (err == cudaSuccess)
        return 0;
    fprintf(stderr, "process_floor: %s failed: %s\n", what, cudaGetErrorString(err));
    return 1;
}

int main(int argc, char **argv)
{
    const int fast_exit = argc > 1 && strcmp(argv[1], "exit") == 0;
    if (argc > 2 || (argc == 2 && !fast_exit)) {
        fprintf(stderr, "usage: cuda_process_floor [exit]\n");
        return 2;
    }
    setvbuf(stderr, NULL, _IONBF, 0);
    fprintf(stderr, "start: main entered\n");
    int count = 0;
    if (check(cudaGetDeviceCount(&count), "cudaGetDeviceCount"))
        return 1;
    fprintf(stderr, "driver: initialised, %d device(s)\n", count);
    if (check(cudaSetDevice(0), "cudaSetDevice") || check(cudaFree(0), "cudaFree(0)"))
        return 1;
    fprintf(stderr, "context: primary context of device 0 made\n");
    int *p = NULL;
    if (check(cudaMalloc(&p, 32 * sizeof *p), "cudaMalloc"))
        return 1;
    touch<<<1, 32>>>(p);
    if (check(cudaDeviceSynchronize(), "the kernel") || check(cudaFree(p), "cudaFree"))
        return 1;
    fprintf(stderr, "kernel: one kernel ran\n");
    fprintf(stderr, "end: leaving main%s\n", fast_exit ? " through _exit" : "");
    if (fast_exit)
        _exit(0);
    return 0;
}
