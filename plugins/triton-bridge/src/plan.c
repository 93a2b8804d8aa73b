/*
 * plan.c — band planning and threshold rounding (see plan.h).
 */
#include "plan.h"

#include <math.h>

int tb_next_band(uint64_t n, uint64_t block, uint64_t bi0, uint64_t elem_size, uint64_t max_bytes,
                 tb_band *band)
{
    uint64_t rows = n / block + (n % block != 0);
    if (bi0 >= rows)
        return 0;
    uint64_t first = tb_entries_before_row(bi0 * block, n);
    /* Grow one block row at a time; the number of rows a band gets is small
     * next to the work each row launches, so the loop costs nothing. */
    uint64_t bi1 = bi0 + 1;
    while (bi1 < rows) {
        uint64_t entries = tb_entries_before_row((bi1 + 1) * block, n) - first;
        if (entries > max_bytes / elem_size)
            break;
        bi1++;
    }
    band->bi0 = bi0;
    band->bi1 = bi1;
    band->tile0 = tb_tiles_below(bi0);
    band->tiles = tb_tiles_below(bi1) - band->tile0;
    band->out0 = first;
    band->entries = tb_entries_before_row(bi1 * block, n) - first;
    return 1;
}

float tb_float_at_most(double t)
{
    float f = (float)t; /* round to nearest: within one float of t */
    if ((double)f > t)
        f = nextafterf(f, -INFINITY);
    return f;
}
