/*
 * topoml/plugin.h — the backend plugin ABI, version 1.
 *
 * This is the only project header a backend plugin includes (it pulls in
 * topoml/types.h). docs/plugin-abi.md is the same contract in prose; where
 * the two disagree it is a bug, and this header wins until it is fixed.
 *
 * A plugin is a shared object named topoml-backend-<name>.so that exports one
 * symbol, TOPOML_PLUGIN_ENTRY ("topoml_backend_negotiate"):
 *
 *   int topoml_backend_negotiate(uint32_t *abi_version,
 *                                const topoml_host_v1 *host,
 *                                const topoml_backend_v1 **backend);
 *
 * The core stores in *abi_version the newest ABI version it speaks. The plugin
 * answers by storing the version it will speak (<= the offered one) and a
 * pointer to its static vtable, returning TOPOML_OK; or it refuses with
 * TOPOML_E_ABI. The core checks that the answer is a version it speaks and
 * that the vtable is at least as long as that version's v1 prefix; otherwise
 * the plugin is skipped with a logged reason.
 *
 * Rules that hold across the boundary (see docs/plugin-abi.md):
 *  - Every struct starts with uint32_t struct_size. Fields are only ever
 *    appended; a reader uses a field only if struct_size covers it.
 *  - Nothing crosses by exit, abort, longjmp, C++ exception or signal. Every
 *    entry point returns a topoml_status; on failure it writes a message into
 *    call->error (NUL-terminated, truncated to call->error_size).
 *  - Memory that outlives a call (edge lists, barcode intervals) is allocated
 *    with call->alloc and freed by the core with call->free. Scratch memory
 *    may come from anywhere, but should come from call->alloc so that the
 *    host's accounting and fault injection see it.
 *  - Plugins never write to stdout. They log through host->log / call->log.
 *  - Thread safety: the core never calls into one state object from two
 *    threads at once. Different states (from separate create() calls) may be
 *    used concurrently, so plugin globals must be read-only or synchronised.
 */
#ifndef TOPOML_PLUGIN_H
#define TOPOML_PLUGIN_H

#include "topoml/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TOPOML_ABI_VERSION 1u
#define TOPOML_PLUGIN_ENTRY "topoml_backend_negotiate"

#if defined(__GNUC__)
#define TOPOML_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define TOPOML_PLUGIN_EXPORT
#endif

/* Log levels for host->log and call->log. */
typedef enum topoml_log_level {
    TOPOML_LOG_ERROR = 0,
    TOPOML_LOG_WARN = 1,
    TOPOML_LOG_INFO = 2,
    TOPOML_LOG_DEBUG = 3
} topoml_log_level;

/* Handed to the plugin at negotiation and to create(); valid until the
 * state made with it is destroyed. */
typedef struct topoml_host_v1 {
    uint32_t struct_size;
    uint32_t abi_version; /* the newest version the core speaks */
    void *host_data;      /* pass back as the first argument of each callback */
    void *(*alloc)(void *host_data, size_t size);
    void *(*realloc)(void *host_data, void *ptr, size_t size);
    void (*free)(void *host_data, void *ptr);
    void (*log)(void *host_data, int level, const char *message);
    const char *core_version; /* "MAJOR.MINOR.PATCH" */
} topoml_host_v1;

/* Per-call services and limits; one is passed to every op. */
typedef struct topoml_call_v1 {
    uint32_t struct_size;
    uint32_t reserved;
    void *host_data;
    void *(*alloc)(void *host_data, size_t size);
    void *(*realloc)(void *host_data, void *ptr, size_t size);
    void (*free)(void *host_data, void *ptr);
    void (*log)(void *host_data, int level, const char *message);
    /* Report progress; returns non-zero when the op should stop, in which case
     * the op returns TOPOML_E_CANCELLED (with whatever partial result its
     * contract allows). `total` may be 0 when unknown. Cheap enough to call a
     * few hundred times a second, not per inner-loop iteration. */
    int (*progress)(void *host_data, const char *stage, uint64_t done, uint64_t total);
    uint64_t max_memory; /* bytes the op may allocate in all; 0 = no limit */
    char *error;         /* buffer for a message on failure (may be NULL) */
    size_t error_size;
    int32_t device; /* accelerator index; -1 = the plugin's default */
    uint32_t reserved2;
    /* Appended in core 0.3 (read only when struct_size covers it): */
    uint32_t n_threads; /* threads the op may use; 0: the plugin decides, at
                           most the CPUs the process may run on */
    uint32_t reserved3;
} topoml_call_v1;

/* Input kinds of topoml_input_v1. */
typedef enum topoml_input_kind {
    TOPOML_INPUT_POINTS = 0,    /* n points of `dim` coordinates, row-major */
    TOPOML_INPUT_CONDENSED = 1, /* lower-triangular distances, Ripser's order */
    TOPOML_INPUT_SPARSE = 2     /* an edge list over n vertices */
} topoml_input_kind;
#define TOPOML_INPUT_KIND_COUNT 3

/* What an op works on. The data belongs to the caller and is read-only.
 *
 * CONDENSED order is Ripser's lower-distance order: d(1,0), d(2,0), d(2,1),
 * d(3,0), ... ; the entry for i > j is at i*(i-1)/2 + j; n*(n-1)/2 entries.
 * SPARSE: edges with i < j, no duplicates, any order; absent pairs are at
 * infinite distance. A distance of +INFINITY in CONDENSED input is likewise
 * an absent edge; NaN and negative distances are invalid. */
typedef struct topoml_input_v1 {
    uint32_t struct_size;
    uint32_t kind;  /* topoml_input_kind */
    uint64_t n;     /* number of points / vertices */
    uint64_t dim;   /* POINTS: coordinates per point */
    uint32_t dtype; /* POINTS, CONDENSED: element type (topoml_dtype) */
    uint32_t metric; /* POINTS: topoml_metric */
    const void *data; /* POINTS, CONDENSED */
    uint64_t n_edges;          /* SPARSE */
    const topoml_edge *edges;  /* SPARSE */
    /* Appended in core 0.4 (read only when struct_size covers them; a
     * shorter struct is host memory): where `data` lives. The core hands
     * memory other than HOST only to an op whose capability record has
     * TOPOML_CAP_DEVICE_INPUT (docs/plugin-abi.md, "Device memory"). */
    uint32_t memory;  /* topoml_memory; not HOST: f32 values are widened to
                         double before any arithmetic (the core widens host
                         data so), in every op */
    int32_t device;   /* CUDA: the index of the device that holds `data` */
    void *stream;     /* CUDA: the cudaStream_t after whose work so far `data`
                         is ready (NULL: the legacy default stream); the
                         plugin waits for it and never writes `data` */
} topoml_input_v1;

/* topoml_input_v1.memory. */
typedef enum topoml_memory {
    TOPOML_MEMORY_HOST = 0, /* ordinary memory of this process */
    TOPOML_MEMORY_CUDA = 1  /* CUDA device memory (a device pointer) */
} topoml_memory;

/* Parameters of the Vietoris–Rips op. */
typedef struct topoml_rips_params_v1 {
    uint32_t struct_size;
    uint32_t max_dim;  /* compute H_0 .. H_max_dim */
    double threshold;  /* largest diameter; +INFINITY = none given, the
                          backend uses the enclosing radius (homology is
                          trivial beyond it) */
    uint32_t modulus;  /* coefficients in Z/p, p prime */
    uint32_t reserved;
    /* Appended in core 0.3 (read only when struct_size covers them): */
    uint32_t flags;     /* TOPOML_RIPS_PARAM_* */
    uint32_t reserved2; /* zero */
} topoml_rips_params_v1;

/* topoml_rips_params_v1.flags. GENERATORS: fill topoml_barcode_v1.generators
 * (a backend whose rips capability lacks TOPOML_CAP_GENERATORS is never
 * asked; see docs/plugin-abi.md, "Generators"). */
#define TOPOML_RIPS_PARAM_GENERATORS 1u
/* topoml_rips_params_v1.flags, core 0.4. COCYCLES: fill
 * topoml_barcode_v1.cocycle_offsets and .cocycles (a backend whose rips
 * capability lacks TOPOML_CAP_COCYCLES is never asked; see
 * docs/plugin-abi.md, "Cocycles"). */
#define TOPOML_RIPS_PARAM_COCYCLES 2u

/* A barcode produced by a plugin. The caller zero-initialises it and sets
 * struct_size; the plugin fills it. `intervals` comes from call->alloc and is
 * owned by the caller afterwards (also after an error, if non-NULL). */
typedef struct topoml_barcode_v1 {
    uint32_t struct_size;
    uint32_t max_dim;     /* dimensions computed: 0 .. max_dim */
    uint64_t n_intervals;
    topoml_interval *intervals; /* grouped by dimension, ascending */
    uint32_t complete;    /* 1: every dimension finished; 0: cancelled, and
                             dimensions 0..max_dim are complete; a cancel
                             before H0 was finished leaves no intervals at
                             all (n_intervals 0), which for n > 0 points
                             cannot be a finished H0. The same holds for an
                             op that returns TOPOML_E_LIMIT (the memory
                             limit reached in dimension max_dim + 1) */
    uint32_t reserved;
    /* Appended in core 0.3 (written only when struct_size covers it): with
     * TOPOML_RIPS_PARAM_GENERATORS, n_intervals entries from call->alloc,
     * generators[k] belonging to intervals[k]; else NULL. Owned by the
     * caller afterwards, like `intervals`. */
    topoml_generator *generators;
    /* Appended in core 0.4 (written only when struct_size covers them):
     * with TOPOML_RIPS_PARAM_COCYCLES, a representative cocycle for every
     * interval of dimension >= 1 (docs/plugin-abi.md, "Cocycles"). The
     * cocycle of intervals[k], of dimension d, is the rows in
     * cocycles[cocycle_offsets[k] .. cocycle_offsets[k + 1]), d + 2 words a
     * row: the d + 1 vertices of a simplex, descending, then its
     * coefficient in 1..p-1. Dimension 0: no rows. cocycle_offsets has
     * n_intervals + 1 entries, cocycle_offsets[0] = 0; both arrays come from
     * call->alloc and are owned by the caller afterwards (cocycles may be
     * NULL when there are no rows). Not asked: both left NULL. */
    uint64_t *cocycle_offsets;
    uint32_t *cocycles;
} topoml_barcode_v1;

/* Weights of the persistence image op. */
typedef enum topoml_image_weight {
    TOPOML_WEIGHT_CONSTANT = 0, /* w = 1 */
    TOPOML_WEIGHT_LINEAR = 1,   /* w = min(pers / weight_max, 1) */
    TOPOML_WEIGHT_POWER = 2     /* w = pers ^ weight_power */
} topoml_image_weight;

/* What happens to points with infinite death. */
typedef enum topoml_image_infinite {
    TOPOML_INFINITE_DROP = 0, /* ignored */
    TOPOML_INFINITE_CLIP = 1  /* death replaced by clip_death */
} topoml_image_infinite;

/* Persistence image parameters (Adams et al., JMLR 2017). A point (b, d)
 * maps to (b, p = d - b) and contributes w(p) times a Gaussian of standard
 * deviation sigma centred there. Pixel (row r, column c) is the exact integral
 * of that surface over [birth_min + c*db, birth_min + (c+1)*db) x
 * [pers_min + r*dp, pers_min + (r+1)*dp) with db = (birth_max-birth_min)/width
 * and dp = (pers_max-pers_min)/height. Row 0 is the lowest persistence. */
typedef struct topoml_image_params_v1 {
    uint32_t struct_size;
    uint32_t weight;   /* topoml_image_weight */
    double weight_max; /* LINEAR */
    double weight_power; /* POWER */
    double sigma;
    double birth_min, birth_max;
    double pers_min, pers_max;
    uint32_t width, height;
    uint32_t infinite; /* topoml_image_infinite */
    uint32_t reserved;
    double clip_death; /* CLIP */
} topoml_image_params_v1;

/* Ops, as capability records name them. */
typedef enum topoml_op {
    TOPOML_OP_DISTANCES = 0,
    TOPOML_OP_EDGES = 1,
    TOPOML_OP_H0 = 2,
    TOPOML_OP_RIPS = 3,
    TOPOML_OP_IMAGE = 4
} topoml_op;
#define TOPOML_OP_COUNT 5

/* What a backend can do for one op. A backend that claims a capability and
 * then answers TOPOML_E_UNSUPPORTED for parameters inside it has lied, and
 * the conformance suite fails it. */
typedef struct topoml_capability_v1 {
    uint32_t struct_size;
    uint32_t op;          /* topoml_op */
    uint32_t dtypes;      /* bit (1u << topoml_dtype) per supported dtype */
    uint32_t metrics;     /* bit (1u << topoml_metric), POINTS input */
    uint32_t inputs;      /* bit (1u << topoml_input_kind) */
    uint32_t max_dim;     /* RIPS: highest homology dimension */
    uint32_t max_modulus; /* RIPS: every prime p <= max_modulus (2: Z/2 only) */
    uint32_t features;    /* TOPOML_CAP_* bits; was `reserved` (always 0)
                             before core 0.3 */
    uint64_t max_points;  /* 0: no limit of the backend's own */
    const char *device;   /* "cpu" or "cpu: <model>" for the host's CPU, else the
                             accelerator, e.g. "NVIDIA H200 (sm_90, 139 GiB)" */
    const char *schedule; /* "key=value ..." tiles, warps, stages, target; or NULL */
} topoml_capability_v1;

/* topoml_capability_v1.features. GENERATORS (RIPS): the backend fills
 * topoml_barcode_v1.generators when the parameters ask for them. */
#define TOPOML_CAP_GENERATORS 1u
/* topoml_capability_v1.features, core 0.4. DEVICE_INPUT (any op): the op
 * takes input whose `memory` is not TOPOML_MEMORY_HOST, for the kinds in
 * `inputs`, and reads it where it is. Other backends get a host copy, made
 * by the core through the input_to_host entry of a backend that has one. */
#define TOPOML_CAP_DEVICE_INPUT 2u
/* topoml_capability_v1.features, core 0.4. NVIDIA_DRIVER (any op): the op
 * uses NVIDIA's kernel driver. A plugin that runs in a sandboxed helper
 * process may then open the driver's device files (/dev/nvidiactl,
 * /dev/nvidia<N>, /dev/nvidia-uvm, /dev/nvidia-uvm-tools,
 * /dev/nvidia-modeset, /dev/nvidia-caps/) for reading and writing, call
 * ioctl on them, and read /proc/driver/nvidia and /sys; without the bit it
 * may not (docs/security.md, "The sandbox"). */
#define TOPOML_CAP_NVIDIA_DRIVER 4u
/* topoml_capability_v1.features, core 0.4. COCYCLES (RIPS): the backend fills
 * topoml_barcode_v1.cocycle_offsets and .cocycles when the parameters ask
 * for them (TOPOML_RIPS_PARAM_COCYCLES). */
#define TOPOML_CAP_COCYCLES 8u

/* The backend vtable. The plugin keeps it in static storage. Op pointers are
 * NULL where unsupported. Every op returns a topoml_status. */
typedef struct topoml_backend_v1 {
    uint32_t struct_size;
    uint32_t abi_version;
    const char *name;        /* [a-z0-9-]+, unique among plugins */
    const char *version;     /* the plugin's own version */
    const char *vendor;
    const char *description;

    /* Make / free per-context state; create may be NULL (state is NULL). */
    int (*create)(const topoml_host_v1 *host, void **state);
    void (*destroy)(void *state);

    /* Is the hardware there and usable? TOPOML_OK, or TOPOML_E_UNSUPPORTED
     * (or another error) with the reason in `why`. Must not crash on any
     * machine: check CPU features, drivers and devices before using them. */
    int (*probe)(void *state, char *why, size_t why_size);

    /* The capability records; valid until destroy. Called after probe. */
    int (*capabilities)(void *state, const topoml_capability_v1 **caps, uint32_t *n_caps);

    /* POINTS in; writes n*(n-1)/2 values of in->dtype to `out`. */
    int (*distances)(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                     void *out);

    /* POINTS or CONDENSED in; every pair i < j with d(i,j) <= threshold,
     * sorted by (d, i, j), in an array from call->alloc. For POINTS, d is the
     * value the distances op gives for in->dtype, widened to double. */
    int (*edges)(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                 double threshold, topoml_edge **out, uint64_t *n_out);

    /* H_0 of the Rips filtration up to threshold (+INFINITY: none): n-1
     * finite-or-infinite bars of birth 0 plus one infinite bar per component;
     * bars of zero length are not reported. */
    int (*h0)(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
              double threshold, topoml_barcode_v1 *out);

    /* Vietoris–Rips barcodes in dimensions 0..params->max_dim. */
    int (*rips)(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                const topoml_rips_params_v1 *params, topoml_barcode_v1 *out);

    /* Persistence images of n_diagrams diagrams; diagram k is
     * pairs[offsets[k] .. offsets[k+1]); out holds n_diagrams*height*width
     * doubles, image k at out + k*height*width, row-major. */
    int (*image)(void *state, const topoml_call_v1 *call, const topoml_image_params_v1 *params,
                 uint64_t n_diagrams, const uint64_t *offsets, const topoml_pair *pairs,
                 double *out);

    /* Appended to v1 in core 0.2 (a shorter vtable reads as 0): whether the
     * core may choose this backend when the host names none, a
     * topoml_selection. */
    uint32_t selection;

    /* Appended to v1 in core 0.4 (a shorter vtable reads as NULL): copy the
     * data of `in`, which lives in device memory (in->memory, in->device,
     * after in->stream's work), into host memory at `out`, sized by the core:
     * n*dim (POINTS) or n*(n-1)/2 (CONDENSED) values of in->dtype. Returns
     * when the copy is complete. NULL for a backend that reads no device
     * memory; one that claims TOPOML_CAP_DEVICE_INPUT must have it. */
    int (*input_to_host)(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                         void *out);
} topoml_backend_v1;

/* topoml_backend_v1.selection. */
typedef enum topoml_selection {
    /* Chosen like any backend: accelerators first, then the other plugins,
     * then the built-in reference (docs/plugin-abi.md, "Selection"). */
    TOPOML_SELECT_AUTO = 0,
    /* Only when the host names it (topoml_use_backend, `--backend`) or the
     * configuration lists it in `prefer`: for a backend kept for
     * cross-checking rather than speed. */
    TOPOML_SELECT_BY_NAME = 1
} topoml_selection;

/* The entry symbol's type. */
typedef int (*topoml_backend_negotiate_fn)(uint32_t *abi_version, const topoml_host_v1 *host,
                                           const topoml_backend_v1 **backend);

/* The smallest struct_size a plugin must accept for each table it is handed:
 * the end of the table's last field in the first ABI-v1 layout (core 0.1).
 * A host built against an older header sends those shorter tables; fields
 * appended since are read only when TOPOML_STRUCT_HAS says struct_size covers
 * them, and are otherwise their documented defaults (docs/plugin-abi.md,
 * "What a plugin must accept"). */
#define TOPOML_HOST_V1_MIN_SIZE \
    (offsetof(topoml_host_v1, core_version) + sizeof(const char *))
#define TOPOML_CALL_V1_MIN_SIZE (offsetof(topoml_call_v1, reserved2) + sizeof(uint32_t))
#define TOPOML_INPUT_V1_MIN_SIZE \
    (offsetof(topoml_input_v1, edges) + sizeof(const topoml_edge *))
#define TOPOML_RIPS_PARAMS_V1_MIN_SIZE \
    (offsetof(topoml_rips_params_v1, reserved) + sizeof(uint32_t))
#define TOPOML_BARCODE_V1_MIN_SIZE (offsetof(topoml_barcode_v1, reserved) + sizeof(uint32_t))
#define TOPOML_IMAGE_PARAMS_V1_MIN_SIZE \
    (offsetof(topoml_image_params_v1, clip_death) + sizeof(double))
/* Whether the table at `ptr`, of type `type`, is long enough to hold `field`. */
#define TOPOML_STRUCT_HAS(ptr, type, field) \
    ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type *)0)->field))

#ifdef __cplusplus
}
#endif
#endif /* TOPOML_PLUGIN_H */
