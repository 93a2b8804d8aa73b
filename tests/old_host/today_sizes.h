/*
 * today_sizes.h — sizes of the plugin ABI's tables as today's header has
 * them (today_sizes.c), for a test built against an older header.
 */
#ifndef TOPOML_TESTS_TODAY_SIZES_H
#define TOPOML_TESTS_TODAY_SIZES_H

#include <stddef.h>

typedef struct old_host_sizes {
    size_t host, call, input, rips_params, barcode, image_params;
} old_host_sizes;

/* sizeof each table in today's header. */
void old_host_today_sizes(old_host_sizes *out);
/* Today's TOPOML_*_V1_MIN_SIZE: what a plugin must accept. */
void old_host_min_sizes(old_host_sizes *out);

#endif
