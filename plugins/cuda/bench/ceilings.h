/*
 * ceilings.h — the measured limits the benchmark compares the kernels with
 * (ceilings.cu).
 */
#ifndef TOPOML_CUDA_BENCH_CEILINGS_H
#define TOPOML_CUDA_BENCH_CEILINGS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bench_ceiling {
    double write_gbs;   /* device memory, writing only (GB/s) */
    double fp32_tflops; /* separate f32 multiplies and adds (no FMA) */
    double fp64_tflops; /* the same in f64 */
} bench_ceiling;

/* Measure on the current device; 0 or -1 (a CUDA error). */
int bench_ceilings(bench_ceiling *out);

#ifdef __cplusplus
}
#endif
#endif
