/*
 * not_cuda.c — built as a libcuda.so.1 that is not a CUDA driver (it has
 * none of the driver's symbols), so that the "no usable driver" path of the
 * triton-bridge probe is tested on machines that do have one.
 */
int tb_not_a_cuda_driver(void);
int tb_not_a_cuda_driver(void)
{
    return 0;
}
