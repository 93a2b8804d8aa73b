/*
 * host_exact.c — inputs the device kernels' plain sums cannot get right
 * (coordinates beyond [2^-400, 2^480], or [2^-36, 2^40] in f32: squares of
 * differences that overflow or underflow) go to the host, computed pair by
 * pair with the reference's definition: plugins/scalar/exact_pairs.h, here
 * in C for the .cu files.
 */
#include "backend.h"
#include "exact_pairs.h"

bool tmc_in_device_range(const topoml_input_v1 *in)
{
    /* Input in device memory was checked there (tmc_device_points). */
    if (tmc_on_device(in))
        return true;
    return scalar_in_plain_range(in);
}

int tmc_exact_distances(const topoml_call_v1 *call, const topoml_input_v1 *in, void *out,
                        bool out_f64)
{
    return scalar_exact_distances(call, in, out, out_f64, "cuda");
}

int tmc_exact_edges(const topoml_call_v1 *call, const topoml_input_v1 *in, double threshold,
                    topoml_edge **out, uint64_t *n_out)
{
    return scalar_exact_edges(call, in, threshold, out, n_out, "cuda");
}
