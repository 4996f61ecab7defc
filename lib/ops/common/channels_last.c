/* channels_last.c — see channels_last.h. */
#include "channels_last.h"

#include <stdatomic.h>
#include <string.h>

static _Atomic uint64_t conversions;

bool kiln_layout_is_trivial(const kiln_tensor *t)
{
    uint64_t spatial = 1;
    for (uint32_t a = 2; a < t->rank; a++)
        spatial *= (uint64_t)t->shape[a];
    return t->rank < 3 || t->shape[1] == 1 || spatial <= 1;
}

void kiln_layout_to_plain(kiln_tensor *t, void *scratch)
{
    if (kiln_layout_is_trivial(t) || t->element_count == 0)
        return;
    uint64_t images = (uint64_t)t->shape[0], channels = (uint64_t)t->shape[1];
    uint64_t positions = t->element_count / (images * channels);
    float *data = t->data;
    const float *from = scratch;
    memcpy(scratch, data, t->element_count * sizeof *data);
    atomic_fetch_add(&conversions, 1);
    /* Image by image: [positions, channels] becomes [channels, positions]. */
    for (uint64_t i = 0; i < images; i++) {
        const float *in = from + i * positions * channels;
        float *y = data + i * positions * channels;
        for (uint64_t p = 0; p < positions; p++)
            for (uint64_t c = 0; c < channels; c++)
                y[c * positions + p] = in[p * channels + c];
    }
}

uint64_t kiln_layout_conversions(void)
{
    return atomic_load(&conversions);
}
