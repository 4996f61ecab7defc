/* runtime_info.c — what this runtime reads and runs, for `kiln version`. */
#include <kiln/kiln.h>

#include "format/container.h"
#include "op_registry.h"

void kiln_runtime_format_version(uint16_t *major, uint16_t *minor)
{
    *major = KILN_FORMAT_MAJOR;
    *minor = KILN_FORMAT_MINOR;
}

uint32_t kiln_runtime_op_count(void)
{
    return kiln_op_count();
}

void kiln_runtime_op(uint32_t index, const char **name, uint32_t *min_version, uint32_t *max_version)
{
    const kiln_op_def *op = kiln_op_at(index);
    *name = op ? op->name : "";
    *min_version = op ? op->versions.min : 0;
    *max_version = op ? op->versions.max : 0;
}

const char *const *kiln_runtime_features(void)
{
    /* Fixed at build time: the fast paths this build has (meson option
     * `onednn`; OpenMP when the compiler has it). */
    static const char *const features[] = {
        "reference-kernels", "zlib-compression", "ed25519-signatures",
        "half-precision", /* required feature bit 0: f16 and bf16 computed in f32 */
#ifdef KILN_HAVE_ONEDNN
        "onednn",
#endif
#ifdef _OPENMP
        "openmp-threads",
#endif
        "vector-math", /* f32 exp, erf, activations, softmax (vector_math.h) */
        "recurrent-f32", /* f32 rnn, gru, lstm (recurrent_f32.h) */
        "resize-tables", /* resize, resize_to: nearest, f32 linear (resize.c) */
        NULL,
    };
    return features;
}
