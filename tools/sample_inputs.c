/* sample_inputs.c — inputs inside a program's contract (sample_inputs.h). */
#include "sample_inputs.h"

#include <string.h>

uint64_t sample_random(uint64_t *state)
{
    /* xorshift64*: deterministic per seed, good enough for test data */
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * UINT64_C(2685821657736338717);
}

static double uniform(uint64_t *state, double lo, double hi)
{
    return lo + (hi - lo) * (double)(sample_random(state) >> 11) * (1.0 / 9007199254740992.0);
}

int64_t sample_dim_first(const kiln_dim_info *d)
{
    int64_t r = d->min % d->multiple_of;
    return r == 0 ? d->min : d->min + (d->multiple_of - r);
}

int64_t sample_dim_last(const kiln_dim_info *d)
{
    return d->max - d->max % d->multiple_of;
}

/*
 * Whether input `index` is the index operand (operand 1) of an op that
 * reads positions from it. Random 1..9 would mostly point outside the
 * axis; 0 is a valid position of every non-empty axis (and a valid
 * length for reverse_sequence).
 */
static bool used_as_indices(const kiln_program *program, uint32_t index)
{
    static const char *const indexing_ops[] = {"gather",     "gather_elements", "gather_nd",       "scatter_elements",
                                               "scatter_nd", "max_unpool",      "reverse_sequence"};
    for (uint32_t n = 0; n < kiln_program_node_count(program); n++) {
        kiln_node_info node;
        kiln_program_node(program, n, &node);
        if (node.input_count < 2 || kiln_program_node_input(program, n, 1) != index)
            continue;
        for (size_t i = 0; i < sizeof indexing_ops / sizeof indexing_ops[0]; i++)
            if (strcmp(node.op, indexing_ops[i]) == 0)
                return true;
    }
    return false;
}

void sample_fill_input(const kiln_program *program, uint32_t index, kiln_tensor *t, uint64_t *state)
{
    kiln_input_check check;
    kiln_input_check_default(&check);
    bool has_check = kiln_program_input_check(program, index, &check);
    bool indices = !(has_check && (check.category_count || check.has_range)) && used_as_indices(program, index);
    double lo = -1, hi = 1;
    if (has_check && check.has_range) {
        lo = check.min > -1e6 ? check.min : -1e6;
        hi = check.max < 1e6 ? check.max : 1e6;
    }
    uint64_t n = kiln_tensor_element_count(t);
    void *data = kiln_tensor_data(t);
    for (uint64_t i = 0; i < n; i++) {
        double v = uniform(state, lo, hi);
        int64_t k;
        if (has_check && check.category_count) {
            k = check.categories[sample_random(state) % check.category_count];
        } else if (indices) {
            k = 0;
        } else {
            /* Integers from 1..9 (clipped to the range): small, and never a zero divisor. */
            int64_t ilo = has_check && check.has_range ? (int64_t)check.min : 1;
            int64_t ihi = has_check && check.has_range ? (int64_t)check.max : 9;
            ilo = ilo < 1 && ihi >= 1 ? 1 : ilo;
            ihi = ihi > 9 && ilo <= 9 ? 9 : ihi;
            k = ilo + (int64_t)(sample_random(state) % (uint64_t)(ihi - ilo + 1));
        }
        switch (kiln_tensor_dtype(t)) {
        case KILN_F32: ((float *)data)[i] = (float)v; break;
        case KILN_F64: ((double *)data)[i] = v; break;
        case KILN_I8: ((int8_t *)data)[i] = (int8_t)k; break;
        case KILN_I16: ((int16_t *)data)[i] = (int16_t)k; break;
        case KILN_I32: ((int32_t *)data)[i] = (int32_t)k; break;
        case KILN_I64: ((int64_t *)data)[i] = k; break;
        case KILN_U8: ((uint8_t *)data)[i] = (uint8_t)k; break;
        case KILN_U16: ((uint16_t *)data)[i] = (uint16_t)k; break;
        case KILN_U32: ((uint32_t *)data)[i] = (uint32_t)k; break;
        case KILN_U64: ((uint64_t *)data)[i] = (uint64_t)k; break;
        case KILN_BOOL: ((uint8_t *)data)[i] = (uint8_t)(k & 1); break;
        default: break;
        }
    }
}

kiln_status sample_state_lengths(const kiln_program *program, kiln_session *session, const int64_t *dim_values,
                                 kiln_error *err)
{
    kiln_state *state = kiln_session_state(session);
    for (uint32_t i = 0; state && i < kiln_program_state_count(program); i++) {
        const char *name, *length_dim;
        kiln_status status = kiln_program_state_at(program, i, &name, NULL, NULL, NULL, NULL, &length_dim, err);
        if (status != KILN_OK)
            return status;
        int64_t length = 0;
        for (uint32_t d = 0; d < kiln_program_dim_count(program); d++) {
            kiln_dim_info dim;
            kiln_program_dim(program, d, &dim);
            if (strcmp(dim.name, length_dim) == 0)
                length = dim_values[d];
        }
        status = kiln_state_set_length(state, name, length, err);
        if (status != KILN_OK)
            return status;
    }
    return KILN_OK;
}
