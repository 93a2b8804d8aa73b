/*
 * io_binary.c — Ripser's binary format: the lower triangle in Ripser's
 * order as float32 in the machine's byte order, no header. The size must be
 * a multiple of 4 and the count n(n-1)/2 for some n. From a regular file the
 * size is checked, and the memory reserved, before reading; from a stream
 * the values are read into an array that grows within the memory limit. The
 * result is a CONDENSED data set (widened to double).
 *
 * Ripser itself appends one spurious 0 when it reaches the end of such a
 * file (it tests eof only after a failed read); we read exactly the bytes
 * there are.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "io/io.h"

/* Bytes read per fread; a multiple of 4, so a short read can leave a
 * partial value only at the end of the input. */
#define CHUNK 16384

int tm_read_binary(tm_reader *r, struct topoml_data *out)
{
    tm_vec v = {.elem = sizeof(double)};
    unsigned char chunk[CHUNK];
    uint64_t n;
    char reason[256];
    int st;

    if (r->size_known) {
        uint64_t size = r->remaining;
        if (size == 0) {
            r->offset = 0;
            return tm_fail(r, TOPOML_E_PARSE, "empty input");
        }
        if (size % sizeof(float)) {
            r->offset = size - size % sizeof(float);
            return tm_fail(r, TOPOML_E_PARSE,
                           "the input has %" PRIu64 " bytes, not a multiple of 4 (float32 "
                           "values); %" PRIu64 " bytes are left over",
                           size, size % sizeof(float));
        }
        if (!tm_triangular_n(size / sizeof(float), &n)) {
            r->offset = size;
            tm_count_reason(reason, sizeof reason, size / sizeof(float));
            return tm_fail(r, TOPOML_E_PARSE, "%s", reason);
        }
        r->offset = 0;
        if ((st = tm_vec_grow(r, &v, size / sizeof(float), "the distance matrix")))
            return st;
    }

    for (;;) {
        size_t got;
        if ((st = tm_read_bytes(r, chunk, sizeof chunk, &got)))
            goto fail;
        size_t whole = got - got % sizeof(float);
        for (size_t b = 0; b < whole; b += sizeof(float)) {
            float f;
            memcpy(&f, chunk + b, sizeof f);
            if (!isfinite(f) || f < 0) {
                uint64_t i, j;
                char a[32];
                tm_condensed_pair(v.len, &i, &j);
                tm_fmt_double(a, sizeof a, f);
                r->offset = v.len * sizeof(float);
                st = tm_fail(r, TOPOML_E_INVALID, "d(%" PRIu64 ",%" PRIu64 ") is %s%s", i, j,
                             isnan(f)   ? "NaN"
                             : isinf(f) ? "Inf"
                                        : a,
                             isfinite(f) ? ", a negative distance" : "");
                goto fail;
            }
            if (v.len == v.cap) {
                r->offset = v.len * sizeof(float);
                if ((st = tm_vec_grow(r, &v, v.len + 1, "the distance matrix")))
                    goto fail;
            }
            ((double *)(void *)v.p)[v.len++] = f == 0 ? 0.0 : (double)f;
        }
        if (got < sizeof chunk) {
            if (got != whole) {
                r->offset = r->bytes - (got - whole);
                st = tm_fail(r, TOPOML_E_PARSE,
                             "the input has %" PRIu64 " bytes, not a multiple of 4 (float32 "
                             "values); %zu bytes are left over",
                             r->bytes, got - whole);
                goto fail;
            }
            break;
        }
    }
    r->offset = r->bytes;
    if (r->bytes == 0) {
        st = tm_fail(r, TOPOML_E_PARSE, "empty input");
        goto fail;
    }
    if (!tm_triangular_n(v.len, &n)) {
        tm_count_reason(reason, sizeof reason, v.len);
        st = tm_fail(r, TOPOML_E_PARSE, "%s", reason);
        goto fail;
    }

    out->kind = TOPOML_INPUT_CONDENSED;
    out->n = n;
    out->values = tm_vec_take(r, &v);
    return TOPOML_OK;

fail:
    tm_vec_free(r, &v);
    return st;
}
