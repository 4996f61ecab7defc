/* half_compute.c — half-precision values computed by f32 kernels (see half_compute.h). */
#include "half_compute.h"

#include <stdlib.h>
#include <string.h>

#include "checked_math.h"
#include "error.h"
#include "half.h"
#include "dtype.h"
#include "tensor.h"

bool kiln_call_holds_half(const kiln_kernel_call *call)
{
    if (kiln_dtype_is_half(call->output->dtype))
        return true;
    for (uint32_t i = 0; i < call->input_count; i++)
        if (kiln_dtype_is_half(call->inputs[i]->dtype))
            return true;
    return false;
}

/* What a node keeps between runs: the scratch block and its kernel's own slot. */
typedef struct half_scratch {
    void *block;
    size_t size;
    kiln_node_state inner;
} half_scratch;

static void release_scratch(void *data)
{
    half_scratch *scratch = data;
    if (scratch->inner.release)
        scratch->inner.release(scratch->inner.data);
    free(scratch->block);
    free(scratch);
}

/* Offsets are kept 16-byte aligned so f32 arrays in the block suit vector loads. */
static bool reserve(size_t *size, size_t bytes, size_t *offset)
{
    uint64_t aligned;
    if (!kiln_align_up_u64(*size, 16, &aligned) || aligned > SIZE_MAX)
        return false;
    *offset = (size_t)aligned;
    return kiln_add_size(*offset, bytes, size);
}

/* The f32 bytes of a copy of `t`, or 0 when `t` is passed through. */
static bool f32_bytes(const kiln_tensor *t, size_t *bytes)
{
    *bytes = 0;
    return !kiln_dtype_is_half(t->dtype) || kiln_mul_size((size_t)t->element_count, sizeof(float), bytes);
}

static void widen(const kiln_tensor *from, float *to)
{
    if (from->dtype == KILN_F16)
        kiln_f16_to_f32_array(from->data, to, (size_t)from->element_count);
    else
        kiln_bf16_to_f32_array(from->data, to, (size_t)from->element_count);
}

static void narrow(const float *from, kiln_tensor *to)
{
    if (to->dtype == KILN_F16)
        kiln_f32_to_f16_array(from, to->data, (size_t)to->element_count);
    else
        kiln_f32_to_bf16_array(from, to->data, (size_t)to->element_count);
}

/* The session's scratch grown to `size` bytes, or a new one owned by the caller (no session). */
static kiln_status get_scratch(const kiln_kernel_call *call, size_t size, half_scratch **out, kiln_error *err)
{
    kiln_node_state *slot = call->context ? call->context->state : NULL;
    half_scratch *scratch = slot ? slot->data : NULL;
    if (!scratch) {
        scratch = calloc(1, sizeof *scratch);
        if (!scratch)
            return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for half-precision scratch");
        if (slot) {
            slot->data = scratch;
            slot->release = release_scratch;
        }
    }
    if (scratch->size < size) {
        void *block = malloc(size);
        if (!block) {
            if (!slot)
                release_scratch(scratch);
            return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for %zu bytes of half-precision scratch",
                             size);
        }
        free(scratch->block);
        scratch->block = block;
        scratch->size = size;
    }
    *out = scratch;
    return KILN_OK;
}

/*
 * Lay the scratch out: operand pointers, tensor headers (operands, then
 * result), then the f32 copies in the same order. With `block` NULL only
 * sizes it; otherwise fills it in, widening the operands.
 * @return false if the size overflows.
 */
static bool lay_out(const kiln_kernel_call *call, uint8_t *block, size_t *size, const kiln_tensor ***operands,
                    kiln_tensor **tensors)
{
    uint32_t count = call->input_count;
    size_t pointers_at, tensors_at, pointer_bytes, tensor_bytes, bytes, copy_at;
    *size = 0;
    if (!kiln_mul_size(count, sizeof(const kiln_tensor *), &pointer_bytes) ||
        !kiln_mul_size((size_t)count + 1, sizeof(kiln_tensor), &tensor_bytes) ||
        !reserve(size, pointer_bytes, &pointers_at) || !reserve(size, tensor_bytes, &tensors_at))
        return false;
    if (block) {
        *operands = (const kiln_tensor **)(void *)(block + pointers_at);
        *tensors = (kiln_tensor *)(void *)(block + tensors_at);
    }
    for (uint32_t i = 0; i <= count; i++) {
        const kiln_tensor *t = i < count ? call->inputs[i] : call->output;
        if (!f32_bytes(t, &bytes) || !reserve(size, bytes, &copy_at))
            return false;
        if (!block)
            continue;
        kiln_tensor *copy = &(*tensors)[i];
        *copy = *t;
        if (kiln_dtype_is_half(t->dtype)) {
            float *values = (float *)(void *)(block + copy_at);
            kiln_tensor_view_init(copy, KILN_F32, t->rank, t->shape, values);
            if (i < count)
                widen(t, values);
        }
        if (i < count)
            (*operands)[i] = copy;
    }
    return true;
}

kiln_status kiln_run_half_in_f32(const kiln_kernel_call *call, kiln_kernel kernel, kiln_error *err)
{
    size_t size;
    const kiln_tensor **operands = NULL;
    kiln_tensor *tensors = NULL;
    if (!lay_out(call, NULL, &size, &operands, &tensors))
        return kiln_fail(err, KILN_ERR_LIMIT, "the f32 copies of half-precision operands are too large");
    half_scratch *scratch = NULL;
    KILN_TRY(get_scratch(call, size, &scratch, err));
    lay_out(call, scratch->block, &size, &operands, &tensors);

    /* The reference path: a fast path may round differently, and the
     * result must be the f32 kernel's, rounded once. */
    kiln_kernel_context context;
    kiln_kernel_call f32_call = *call;
    f32_call.inputs = operands;
    f32_call.output = &tensors[call->input_count];
    if (call->context) {
        context = *call->context;
        context.reference_only = true;
        context.onednn = NULL;
        context.state = &scratch->inner;
        f32_call.context = &context;
    }
    kiln_status status = kernel(&f32_call, err);
    if (status == KILN_OK && kiln_dtype_is_half(call->output->dtype))
        narrow(f32_call.output->data, call->output);
    /* Without a state slot to keep it in (no session), the scratch was this call's own. */
    if (!call->context || !call->context->state)
        release_scratch(scratch);
    return status;
}
