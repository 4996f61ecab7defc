/* state_store.c — see state_store.h, and the kiln_state_* functions of kiln.h. */
#include "state_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked_math.h"
#include "error.h"
#include "loader.h"
#include "memory_plan.h"
#include "tensor.h"

static size_t state_bytes(const kiln_state_decl *decl)
{
    uint64_t elements;
    size_t bytes = 0;
    /* The model check proved the size fits. */
    (void)kiln_shape_sizes(decl->dtype, decl->rank, decl->shape, &elements, &bytes, NULL);
    return bytes;
}

kiln_status kiln_state_new(const kiln_program *program, kiln_state **out, kiln_error *err)
{
    *out = NULL;
    if (!program)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "program is NULL");
    const kiln_program *root = kiln_program_root(program);
    const kiln_model *m = &root->model;
    kiln_state *state = calloc(1, sizeof *state);
    if (!state || !(state->buffers = calloc(m->state_count + 1, sizeof *state->buffers))) {
        free(state);
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for the program's states");
    }
    state->root = root;
    atomic_init(&state->in_use, false);
    /*
     * A state is memory a session keeps, as its arena is: together they are
     * bounded by the program's kiln_limits.max_arena_bytes before anything
     * is allocated (an artifact may declare a state of any size that fits
     * 64 bits, and a reset writes every byte).
     */
    uint64_t total = 0;
    for (uint32_t i = 0; i < m->state_count; i++) {
        uint64_t bytes = state_bytes(&m->states[i]);
        if (!kiln_add_u64(total, bytes, &total) || total > root->limits.max_arena_bytes) {
            kiln_state_free(state);
            return kiln_fail(err, KILN_ERR_LIMIT,
                             "state '%s' (%llu bytes) brings the program's states over kiln_limits.max_arena_bytes "
                             "(%llu bytes); load the program with a larger limit to hold them",
                             m->states[i].name, (unsigned long long)bytes,
                             (unsigned long long)root->limits.max_arena_bytes);
        }
    }
    for (uint32_t i = 0; i < m->state_count; i++, state->count++) {
        const kiln_state_decl *decl = &m->states[i];
        size_t bytes = state_bytes(decl), rounded;
        /* aligned_alloc takes a multiple of the alignment: kernels read rows as they read arena slots. */
        bool fits = kiln_add_size(bytes ? bytes : 1, KILN_ARENA_ALIGNMENT - 1, &rounded);
        state->buffers[i].decl = decl;
        state->buffers[i].data = fits ? aligned_alloc(KILN_ARENA_ALIGNMENT, rounded / KILN_ARENA_ALIGNMENT *
                                                                                KILN_ARENA_ALIGNMENT)
                                      : NULL;
        if (!state->buffers[i].data) {
            kiln_state_free(state);
            return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for state '%s' (%zu bytes)", decl->name,
                             bytes);
        }
    }
    kiln_state_reset(state);
    *out = state;
    return KILN_OK;
}

void kiln_state_free(kiln_state *state)
{
    if (!state)
        return;
    for (uint32_t i = 0; i < state->count; i++)
        free(state->buffers[i].data);
    free(state->buffers);
    free(state);
}

void kiln_state_reset(kiln_state *state)
{
    if (!state)
        return;
    /* Zeros, so that what a reset state holds is the same on every run and
     * every machine (no row is read before it is written, but a dump is). */
    for (uint32_t i = 0; i < state->count; i++) {
        memset(state->buffers[i].data, 0, state_bytes(state->buffers[i].decl));
        state->buffers[i].length = 0;
        state->buffers[i].pending = 0;
        state->buffers[i].appended = false;
    }
}

/* The index of state `name` in state->buffers, or an error listing the program's states. */
static kiln_status find(const kiln_state *state, const char *name, uint32_t *index, kiln_error *err)
{
    if (!state || !name)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "state and name must not be NULL");
    for (uint32_t i = 0; i < state->count; i++)
        if (strcmp(state->buffers[i].decl->name, name) == 0) {
            *index = i;
            return KILN_OK;
        }
    char known[512] = "";
    size_t used = 0;
    for (uint32_t i = 0; i < state->count && used < sizeof known; i++)
        used += (size_t)snprintf(known + used, sizeof known - used, "%s'%s'", i ? ", " : "",
                                 state->buffers[i].decl->name);
    return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "program '%s' has no state '%s' (%s%s)", state->root->model.name,
                     name, state->count ? "states: " : "it has no states", known);
}

kiln_status kiln_state_length(const kiln_state *state, const char *name, int64_t *length, kiln_error *err)
{
    uint32_t i;
    KILN_TRY(find(state, name, &i, err));
    *length = state->buffers[i].length;
    return KILN_OK;
}

kiln_status kiln_state_set_length(kiln_state *state, const char *name, int64_t length, kiln_error *err)
{
    uint32_t i;
    KILN_TRY(find(state, name, &i, err));
    kiln_state_buffer *buffer = &state->buffers[i];
    int64_t capacity = buffer->decl->shape[buffer->decl->axis];
    if (length < 0 || length > capacity)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "state '%s' holds 0..%lld rows, not %lld", name,
                         (long long)capacity, (long long)length);
    if (atomic_load(&state->in_use))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "state '%s' is in use by a run", name);
    buffer->length = length;
    return KILN_OK;
}

kiln_status kiln_state_read(const kiln_state *state, const char *name, kiln_tensor **out, kiln_error *err)
{
    *out = NULL;
    uint32_t i;
    KILN_TRY(find(state, name, &i, err));
    const kiln_state_buffer *buffer = &state->buffers[i];
    const kiln_state_decl *decl = buffer->decl;
    int64_t shape[KILN_MAX_RANK];
    memcpy(shape, decl->shape, decl->rank * sizeof *shape);
    shape[decl->axis] = buffer->length;
    KILN_TRY(kiln_tensor_new(decl->dtype, decl->rank, shape, out, err));
    kiln_state_decl_copy_rows(decl, buffer->data, buffer->length, (*out)->data);
    return KILN_OK;
}

kiln_status kiln_state_write(kiln_state *state, const char *name, const kiln_tensor *rows, kiln_error *err)
{
    uint32_t i;
    KILN_TRY(find(state, name, &i, err));
    if (!rows)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "state '%s': rows is NULL", name);
    kiln_state_buffer *buffer = &state->buffers[i];
    const kiln_state_decl *decl = buffer->decl;
    if (rows->dtype != decl->dtype)
        return kiln_fail(err, KILN_ERR_DTYPE_MISMATCH, "state '%s' is %s, not %s", name, kiln_dtype_name(decl->dtype),
                         kiln_dtype_name(rows->dtype));
    if (rows->rank != decl->rank)
        return kiln_fail(err, KILN_ERR_RANK_MISMATCH, "state '%s' has rank %u, not %u", name, decl->rank, rows->rank);
    for (uint32_t a = 0; a < decl->rank; a++) {
        bool growing = a == decl->axis;
        if ((growing && rows->shape[a] > decl->shape[a]) || (!growing && rows->shape[a] != decl->shape[a]))
            return kiln_fail(err, KILN_ERR_SHAPE_GUARD, "state '%s' axis %u is %s%lld, not %lld", name, a,
                             growing ? "at most " : "", (long long)decl->shape[a], (long long)rows->shape[a]);
    }
    if (atomic_load(&state->in_use))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "state '%s' is in use by a run", name);
    kiln_state_decl_write_rows(decl, rows->data, rows->shape[decl->axis], buffer->data);
    buffer->length = rows->shape[decl->axis];
    return KILN_OK;
}

kiln_status kiln_state_acquire(kiln_state *state, kiln_error *err)
{
    if (atomic_exchange(&state->in_use, true))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "the state is in use by another run: runs that share a state take turns (give each "
                         "sequence its own kiln_state)");
    return KILN_OK;
}

void kiln_state_release(kiln_state *state, bool succeeded)
{
    for (uint32_t i = 0; i < state->count; i++) {
        kiln_state_buffer *buffer = &state->buffers[i];
        if (buffer->appended && succeeded)
            buffer->length = buffer->pending;
        buffer->appended = false;
    }
    atomic_store(&state->in_use, false);
}
