/*
 * test_ops_scatter.c — the scatter family (scatter_elements, scatter_nd)
 * against an independent reference, end to end through the public builder
 * and a session, and the shape rules' static refusals.
 *
 * The reference is written here with a different algorithm from the
 * kernels: it walks the output one flat position at a time and, for each,
 * scans every index position in row-major order, recovering multi-indices
 * by div/mod, and folds the updates aimed at that position into it. Its
 * arithmetic is its own too: integers are summed and multiplied as u64
 * and masked to their width; float max/min pick "the first NaN, else the
 * larger with -0.0 below +0.0" by explicit cases. Results must match bit
 * for bit. Out-of-range indices must fail with KILN_ERR_RUNTIME before
 * anything is written (the ASan run checks that nothing is read or
 * written out of bounds).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attribute.h"
#include "half.h"
#include "op_registry.h"
#include "tensor.h"

#include "borrowed_attribute.h"
#include "family_check.h"
#include "prng.h"
#include "tensor_fixture.h"

static const char *const reductions[] = {"none", "add", "mul", "max", "min"};

/* Every op the family registers can be found by name. */
static void family_ops_are_registered(void **state)
{
    (void)state;
    static const char *const names[] = {"scatter_elements", "scatter_nd"};
    assert_family_registered(&kiln_ops_scatter, names, 2);
    assert_null(kiln_op_find_version("scatter_nd", 2));
}

/* ------------------------------------------------------------ helpers */

static uint64_t rng_state = 0x2545F4914F6CDD1Du;

/* Random values: floats small integers and halves with some NaN, -0.0 and infinities; integers random bits. */
static kiln_tensor *random_tensor(kiln_dtype dtype, uint32_t rank, const int64_t *shape)
{
    kiln_tensor *t = new_poisoned_tensor(dtype, rank, shape);
    for (uint64_t i = 0; i < t->element_count; i++) {
        uint64_t r = xorshift64_star_next(&rng_state);
        double v = (double)((int64_t)(r % 17) - 8) / 2;
        switch ((r >> 8) % 16) {
        case 0: v = NAN; break;
        case 1: v = -0.0; break;
        case 2: v = (r >> 12) & 1 ? INFINITY : -INFINITY; break;
        default: break;
        }
        uint32_t nan32 = 0x7FC00000u | (uint32_t)(r >> 40); /* NaNs of many payloads: which one wins shows */
        uint64_t nan64 = UINT64_C(0x7FF8000000000000) | (r >> 20);
        switch (dtype) {
        case KILN_F32:
            if (isnan(v))
                memcpy((float *)t->data + i, &nan32, 4);
            else
                ((float *)t->data)[i] = (float)v;
            break;
        case KILN_F64:
            if (isnan(v))
                memcpy((double *)t->data + i, &nan64, 8);
            else
                ((double *)t->data)[i] = v;
            break;
        case KILN_F16: ((uint16_t *)t->data)[i] = kiln_f32_to_f16((float)v); break;
        case KILN_BF16: ((uint16_t *)t->data)[i] = kiln_f32_to_bf16((float)v); break;
        default: {
            size_t w = kiln_dtype_size(dtype);
            uint64_t bits = xorshift64_star_next(&rng_state);
            memcpy((uint8_t *)t->data + i * w, &bits, w); /* little-endian host: the low bytes */
            if (dtype == KILN_BOOL)
                ((uint8_t *)t->data)[i] &= 1;
        }
        }
    }
    return t;
}

static kiln_tensor *index_tensor(kiln_dtype dtype, uint32_t rank, const int64_t *shape, const int64_t *values)
{
    kiln_tensor *t = new_poisoned_tensor(dtype, rank, shape);
    for (uint64_t i = 0; i < t->element_count; i++) {
        if (dtype == KILN_I32)
            ((int32_t *)t->data)[i] = (int32_t)values[i];
        else
            ((int64_t *)t->data)[i] = values[i];
    }
    return t;
}

static void unflatten(uint64_t flat, uint32_t rank, const int64_t *shape, int64_t *index)
{
    for (uint32_t i = rank; i-- > 0;) {
        index[i] = (int64_t)(flat % (uint64_t)shape[i]);
        flat /= (uint64_t)shape[i];
    }
}

static uint64_t flatten_index(uint32_t rank, const int64_t *shape, const int64_t *index)
{
    uint64_t flat = 0;
    for (uint32_t i = 0; i < rank; i++)
        flat = flat * (uint64_t)shape[i] + (uint64_t)index[i];
    return flat;
}

static kiln_status run_op(const char *name, const kiln_tensor *const *inputs, kiln_tensor *output,
                          uint32_t attribute_count, const kiln_node_attribute *attributes, kiln_error *err)
{
    const kiln_op_def *op = kiln_op_find(name);
    assert_non_null(op);
    memset(output->data, 0x7F, output->byte_size); /* poison: a skipped element is caught */
    kiln_kernel_call call = {inputs, 3, output, attributes, attribute_count, NULL};
    return op->run(&call, err);
}

static bool is_signed_int(kiln_dtype d)
{
    return d == KILN_I8 || d == KILN_I16 || d == KILN_I32 || d == KILN_I64;
}

/* An integer element as u64 bits (sign-extended for signed types). */
static uint64_t int_bits(kiln_dtype d, const uint8_t *p)
{
    size_t w = kiln_dtype_size(d);
    uint64_t bits = 0;
    memcpy(&bits, p, w);
    if (is_signed_int(d) && w < 8 && (bits >> (w * 8 - 1)) & 1)
        bits |= ~UINT64_C(0) << (w * 8);
    return bits;
}

/* Reference max/min of floats: does the update replace `acc`? The first NaN stays; -0.0 is below +0.0. */
static bool reference_takes_update(double acc, double update, bool max)
{
    if (isnan(acc))
        return false;
    if (isnan(update))
        return true;
    if (acc == update) /* equal: only zeros of two signs differ */
        return acc == 0 && signbit(acc) != signbit(update) && (max ? signbit(acc) : signbit(update));
    return max ? update > acc : update < acc;
}

/* Fold `update` into the element at `acc` as the reference defines (f32, f64 and integers). */
static void reference_combine(kiln_dtype d, uint8_t *acc, const uint8_t *update, int reduction)
{
    size_t w = kiln_dtype_size(d);
    if (reduction == 0) {
        memcpy(acc, update, w);
        return;
    }
    if (d == KILN_F32 || d == KILN_F64) {
        double a, u;
        float af, uf;
        if (d == KILN_F32) {
            memcpy(&af, acc, 4);
            memcpy(&uf, update, 4);
            a = af, u = uf;
        } else {
            memcpy(&a, acc, 8);
            memcpy(&u, update, 8);
        }
        if (reduction >= 3) { /* max, min: take one operand's bits (NaN payloads kept) */
            if (reference_takes_update(a, u, reduction == 3))
                memcpy(acc, update, w);
            return;
        }
        if (d == KILN_F32) {
            float r = reduction == 1 ? af + uf : af * uf;
            memcpy(acc, &r, 4);
        } else {
            double r = reduction == 1 ? a + u : a * u;
            memcpy(acc, &r, 8);
        }
        return;
    }
    uint64_t a = int_bits(d, acc), u = int_bits(d, update), r;
    if (reduction == 1)
        r = a + u;
    else if (reduction == 2)
        r = a * u;
    else if (is_signed_int(d))
        r = (reduction == 3) == ((int64_t)u > (int64_t)a) ? u : a;
    else
        r = (reduction == 3) == (u > a) ? u : a;
    memcpy(acc, &r, w); /* the low bytes: modulo 2^bits */
}

/*
 * Compare a result with the reference bit for bit, except that for add and
 * mul on floats a NaN matches any NaN: IEEE 754 does not say which NaN
 * operand's payload a sum or product carries.
 */
static void assert_same_result(kiln_dtype d, int reduction, const void *got, const void *want, uint64_t count)
{
    size_t w = kiln_dtype_size(d);
    for (uint64_t i = 0; i < count; i++) {
        const uint8_t *g = (const uint8_t *)got + i * w, *e = (const uint8_t *)want + i * w;
        if ((reduction == 1 || reduction == 2) && (d == KILN_F32 || d == KILN_F64)) {
            double gv = d == KILN_F32 ? (double)*(const float *)g : *(const double *)g;
            double ev = d == KILN_F32 ? (double)*(const float *)e : *(const double *)e;
            if (isnan(gv) && isnan(ev))
                continue;
        }
        assert_memory_equal(g, e, w);
    }
}

/* ------------------------------------------------------ scatter_elements */

/*
 * The reference of scatter_elements: for each output position, every
 * index position e in row-major order whose target is that position.
 */
static void reference_scatter_elements(const kiln_tensor *data, const int64_t *values, const kiln_tensor *updates,
                                       uint32_t axis, int reduction, uint8_t *expected)
{
    size_t w = kiln_dtype_size(data->dtype);
    memcpy(expected, data->data, data->byte_size);
    for (uint64_t o = 0; o < data->element_count; o++) {
        int64_t oi[KILN_MAX_RANK];
        unflatten(o, data->rank, data->shape, oi);
        for (uint64_t e = 0; e < updates->element_count; e++) {
            int64_t ei[KILN_MAX_RANK];
            unflatten(e, updates->rank, updates->shape, ei);
            int64_t v = values[e] < 0 ? values[e] + data->shape[axis] : values[e];
            bool hit = true;
            for (uint32_t i = 0; i < data->rank; i++)
                hit = hit && (i == axis ? v == oi[i] : ei[i] == oi[i]);
            if (hit)
                reference_combine(data->dtype, expected + o * w, (const uint8_t *)updates->data + e * w, reduction);
        }
    }
}

static void check_scatter_elements(kiln_dtype dtype, uint32_t rank, const int64_t *shape, const int64_t *index_shape,
                                   int64_t axis, int reduction)
{
    uint32_t a = (uint32_t)(axis < 0 ? axis + rank : axis);
    kiln_tensor *data = random_tensor(dtype, rank, shape);
    kiln_tensor *updates = random_tensor(dtype, rank, index_shape);
    int64_t values[256];
    assert_true(updates->element_count <= 256);
    for (uint64_t e = 0; e < updates->element_count; e++) /* duplicates are likely: few values, many indices */
        values[e] = (int64_t)(xorshift64_star_next(&rng_state) % (uint64_t)(2 * shape[a])) - shape[a];
    kiln_dtype index_dtype = xorshift64_star_next(&rng_state) & 1 ? KILN_I32 : KILN_I64;
    kiln_tensor *indices = index_tensor(index_dtype, rank, index_shape, values);
    kiln_tensor *out = new_poisoned_tensor(dtype, rank, shape);
    kiln_node_attribute attrs[] = {
        {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = axis},
        borrowed_attribute(
            (kiln_attribute){.name = "reduction", .type = KILN_ATTRIBUTE_STRING, .s = reductions[reduction]}),
    };
    kiln_error err;
    assert_int_equal(run_op("scatter_elements", (const kiln_tensor *[]){data, indices, updates}, out, 2, attrs, &err),
                     KILN_OK);
    uint8_t *expected = malloc(data->byte_size ? data->byte_size : 1);
    assert_non_null(expected);
    reference_scatter_elements(data, values, updates, a, reduction, expected);
    assert_same_result(dtype, reduction, out->data, expected, data->element_count);
    free(expected);
    kiln_tensor_free(data);
    kiln_tensor_free(updates);
    kiln_tensor_free(indices);
    kiln_tensor_free(out);
}

static void scatter_elements_matches_reference(void **state)
{
    (void)state;
    static const kiln_dtype dtypes[] = {KILN_F32, KILN_F64, KILN_I8, KILN_U16, KILN_I32, KILN_U64, KILN_I64};
    for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++)
        for (int reduction = 0; reduction < 5; reduction++) {
            check_scatter_elements(dtypes[d], 1, (int64_t[]){5}, (int64_t[]){9}, 0, reduction);
            for (int64_t axis = -2; axis < 2; axis++) /* more indices than data along the axis */
                check_scatter_elements(dtypes[d], 2, (int64_t[]){3, 4},
                                       (axis == 0 || axis == -2) ? (int64_t[]){5, 4} : (int64_t[]){3, 6}, axis,
                                       reduction);
            check_scatter_elements(dtypes[d], 3, (int64_t[]){2, 3, 4}, (int64_t[]){2, 5, 2}, 1, reduction);
            check_scatter_elements(dtypes[d], 3, (int64_t[]){2, 3, 4}, (int64_t[]){1, 2, 6}, -1, reduction);
            /* Empty indices: the output is data. */
            check_scatter_elements(dtypes[d], 2, (int64_t[]){3, 4}, (int64_t[]){0, 4}, 0, reduction);
        }
    /* Without a reduction any dtype moves: bool, and f16/bf16 bit for bit. */
    check_scatter_elements(KILN_BOOL, 2, (int64_t[]){3, 4}, (int64_t[]){2, 4}, 1, 0);
    check_scatter_elements(KILN_F16, 2, (int64_t[]){3, 4}, (int64_t[]){2, 4}, 0, 0);
    check_scatter_elements(KILN_BF16, 2, (int64_t[]){3, 4}, (int64_t[]){5, 2}, 0, 0);
}

/* Duplicate indices: in index order, so with no reduction the last update wins. */
static void duplicates_apply_in_index_order(void **state)
{
    (void)state;
    kiln_tensor *data = index_tensor(KILN_I64, 1, (int64_t[]){3}, (int64_t[]){10, 20, 30});
    kiln_tensor *indices = index_tensor(KILN_I64, 1, (int64_t[]){4}, (int64_t[]){1, -2, 1, 0});
    kiln_tensor *updates = index_tensor(KILN_I64, 1, (int64_t[]){4}, (int64_t[]){5, 6, 7, 8});
    kiln_tensor *out = new_poisoned_tensor(KILN_I64, 1, (int64_t[]){3});
    kiln_error err;
    static const int64_t expected[][3] = {{8, 7, 30}, {18, 38, 30}, {80, 4200, 30}, {10, 20, 30}, {8, 5, 30}};
    for (int r = 0; r < 5; r++) {
        kiln_node_attribute attr = borrowed_attribute(
            (kiln_attribute){.name = "reduction", .type = KILN_ATTRIBUTE_STRING, .s = reductions[r]});
        assert_int_equal(run_op("scatter_elements", (const kiln_tensor *[]){data, indices, updates}, out, 1, &attr,
                                &err),
                         KILN_OK);
        assert_memory_equal(out->data, expected[r], sizeof expected[r]);
    }
    /* scatter_nd: the same rule for whole rows. */
    kiln_tensor *rows = index_tensor(KILN_I32, 2, (int64_t[]){3, 1}, (int64_t[]){2, 0, 2});
    kiln_tensor *row_updates = index_tensor(KILN_I64, 2, (int64_t[]){3, 1}, (int64_t[]){1, 2, 3});
    kiln_tensor *nd_data = index_tensor(KILN_I64, 2, (int64_t[]){3, 1}, (int64_t[]){10, 20, 30});
    kiln_tensor *nd_out = new_poisoned_tensor(KILN_I64, 2, (int64_t[]){3, 1});
    assert_int_equal(run_op("scatter_nd", (const kiln_tensor *[]){nd_data, rows, row_updates}, nd_out, 0, NULL, &err),
                     KILN_OK);
    assert_memory_equal(nd_out->data, ((int64_t[]){2, 20, 3}), 3 * sizeof(int64_t));
    kiln_tensor_free(rows);
    kiln_tensor_free(row_updates);
    kiln_tensor_free(nd_data);
    kiln_tensor_free(nd_out);
    kiln_tensor_free(data);
    kiln_tensor_free(indices);
    kiln_tensor_free(updates);
    kiln_tensor_free(out);
}

/* ------------------------------------------------------------ scatter_nd */

/* The reference of scatter_nd: for each output position, every tuple t in order whose prefix names it. */
static void reference_scatter_nd(const kiln_tensor *data, const int64_t *values, uint64_t tuples, uint32_t k,
                                 const kiln_tensor *updates, int reduction, uint8_t *expected)
{
    size_t w = kiln_dtype_size(data->dtype);
    uint64_t inner = 1;
    for (uint32_t i = k; i < data->rank; i++)
        inner *= (uint64_t)data->shape[i];
    memcpy(expected, data->data, data->byte_size);
    for (uint64_t o = 0; o < data->element_count; o++) {
        int64_t oi[KILN_MAX_RANK];
        unflatten(o, data->rank, data->shape, oi);
        for (uint64_t t = 0; t < tuples; t++) {
            bool hit = true;
            for (uint32_t c = 0; c < k; c++) {
                int64_t v = values[t * k + c];
                hit = hit && (v < 0 ? v + data->shape[c] : v) == oi[c];
            }
            if (hit) {
                uint64_t rest = flatten_index(data->rank - k, data->shape + k, oi + k);
                reference_combine(data->dtype, expected + o * w,
                                  (const uint8_t *)updates->data + (t * inner + rest) * w, reduction);
            }
        }
    }
}

static void check_scatter_nd(kiln_dtype dtype, uint32_t rank, const int64_t *shape, uint32_t index_rank,
                             const int64_t *index_shape, int reduction)
{
    uint32_t k = (uint32_t)index_shape[index_rank - 1];
    int64_t update_shape[KILN_MAX_RANK];
    uint32_t update_rank = 0;
    for (uint32_t i = 0; i + 1 < index_rank; i++)
        update_shape[update_rank++] = index_shape[i];
    for (uint32_t i = k; i < rank; i++)
        update_shape[update_rank++] = shape[i];
    kiln_tensor *data = random_tensor(dtype, rank, shape);
    kiln_tensor *updates = random_tensor(dtype, update_rank, update_shape);
    int64_t values[256];
    uint64_t count = 1;
    for (uint32_t i = 0; i < index_rank; i++)
        count *= (uint64_t)index_shape[i];
    assert_true(count <= 256);
    for (uint64_t p = 0; p < count; p++) {
        int64_t extent = shape[p % k];
        values[p] = (int64_t)(xorshift64_star_next(&rng_state) % (uint64_t)(2 * extent)) - extent;
    }
    kiln_dtype index_dtype = xorshift64_star_next(&rng_state) & 1 ? KILN_I32 : KILN_I64;
    kiln_tensor *indices = index_tensor(index_dtype, index_rank, index_shape, values);
    kiln_tensor *out = new_poisoned_tensor(dtype, rank, shape);
    kiln_node_attribute attr = borrowed_attribute(
        (kiln_attribute){.name = "reduction", .type = KILN_ATTRIBUTE_STRING, .s = reductions[reduction]});
    kiln_error err;
    assert_int_equal(run_op("scatter_nd", (const kiln_tensor *[]){data, indices, updates}, out, 1, &attr, &err),
                     KILN_OK);
    uint8_t *expected = malloc(data->byte_size ? data->byte_size : 1);
    assert_non_null(expected);
    reference_scatter_nd(data, values, count / k, k, updates, reduction, expected);
    assert_same_result(dtype, reduction, out->data, expected, data->element_count);
    free(expected);
    kiln_tensor_free(data);
    kiln_tensor_free(updates);
    kiln_tensor_free(indices);
    kiln_tensor_free(out);
}

static void scatter_nd_matches_reference(void **state)
{
    (void)state;
    static const kiln_dtype dtypes[] = {KILN_F32, KILN_F64, KILN_I16, KILN_U8, KILN_I64, KILN_U32};
    for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++)
        for (int reduction = 0; reduction < 5; reduction++) {
            check_scatter_nd(dtypes[d], 3, (int64_t[]){4, 3, 2}, 2, (int64_t[]){6, 1}, reduction);
            check_scatter_nd(dtypes[d], 3, (int64_t[]){4, 3, 2}, 3, (int64_t[]){2, 3, 2}, reduction);
            check_scatter_nd(dtypes[d], 3, (int64_t[]){4, 3, 2}, 2, (int64_t[]){7, 3}, reduction);
            check_scatter_nd(dtypes[d], 1, (int64_t[]){5}, 1, (int64_t[]){1}, reduction);
            check_scatter_nd(dtypes[d], 2, (int64_t[]){3, 2}, 2, (int64_t[]){0, 1}, reduction);
        }
    check_scatter_nd(KILN_BOOL, 2, (int64_t[]){3, 2}, 2, (int64_t[]){4, 2}, 0);
    check_scatter_nd(KILN_F16, 2, (int64_t[]){3, 2}, 2, (int64_t[]){4, 1}, 0);
}

/* ------------------------------------------------------- half precision */

/* A reduction on f16/bf16 is the f32 reduction on widened values, rounded once at the end. */
static void half_reductions_round_once(void **state)
{
    (void)state;
    for (int bf = 0; bf < 2; bf++) {
        kiln_dtype dtype = bf ? KILN_BF16 : KILN_F16;
        /* Many small updates into one element: rounding after each would lose them. */
        float base = bf ? 256.0f : 2048.0f;
        uint16_t data_bits[2] = {bf ? kiln_f32_to_bf16(base) : kiln_f32_to_f16(base),
                                 bf ? kiln_f32_to_bf16(-0.0f) : kiln_f32_to_f16(-0.0f)};
        kiln_tensor *data = new_poisoned_tensor(dtype, 1, (int64_t[]){2});
        memcpy(data->data, data_bits, sizeof data_bits);
        kiln_tensor *updates = new_poisoned_tensor(dtype, 1, (int64_t[]){8});
        int64_t values[8];
        for (int i = 0; i < 8; i++) {
            ((uint16_t *)updates->data)[i] = bf ? kiln_f32_to_bf16(1.0f) : kiln_f32_to_f16(1.0f);
            values[i] = 0;
        }
        kiln_tensor *indices = index_tensor(KILN_I64, 1, (int64_t[]){8}, values);
        kiln_tensor *out = new_poisoned_tensor(dtype, 1, (int64_t[]){2});
        kiln_node_attribute attr = {.name = "reduction", .type = KILN_ATTRIBUTE_STRING, .s = "add"};
        kiln_error err;
        assert_int_equal(run_op("scatter_elements", (const kiln_tensor *[]){data, indices, updates}, out, 1, &attr,
                                &err),
                         KILN_OK);
        /* f32: base + 8 exactly; rounded once: base + 8 (representable), not base (each +1 rounded away). */
        uint16_t want = bf ? kiln_f32_to_bf16(base + 8) : kiln_f32_to_f16(base + 8);
        assert_int_equal(((uint16_t *)out->data)[0], want);
        assert_int_equal(((uint16_t *)out->data)[1], data_bits[1]); /* untouched: -0.0 kept */
        kiln_tensor_free(data);
        kiln_tensor_free(updates);
        kiln_tensor_free(indices);
        kiln_tensor_free(out);
    }
    /* No reduction: a signalling NaN payload moves unchanged. */
    kiln_tensor *updates = new_poisoned_tensor(KILN_F16, 2, (int64_t[]){1, 2});
    ((uint16_t *)updates->data)[0] = 0x7C01;
    ((uint16_t *)updates->data)[1] = 0xFC02;
    kiln_tensor *rows = index_tensor(KILN_I64, 2, (int64_t[]){1, 1}, (int64_t[]){0});
    kiln_error err;
    kiln_tensor *row_data = new_poisoned_tensor(KILN_F16, 2, (int64_t[]){1, 2});
    kiln_tensor *row_out = new_poisoned_tensor(KILN_F16, 2, (int64_t[]){1, 2});
    assert_int_equal(run_op("scatter_nd", (const kiln_tensor *[]){row_data, rows, updates}, row_out, 0, NULL, &err),
                     KILN_OK);
    assert_memory_equal(row_out->data, updates->data, 4);
    kiln_tensor_free(row_data);
    kiln_tensor_free(row_out);
    kiln_tensor_free(updates);
    kiln_tensor_free(rows);
}

/* ------------------------------------------------------ run-time errors */

static void out_of_range_fails_before_writing(void **state)
{
    (void)state;
    kiln_tensor *data = random_tensor(KILN_F32, 2, (int64_t[]){3, 2});
    kiln_tensor *updates = random_tensor(KILN_F32, 2, (int64_t[]){2, 2});
    kiln_tensor *out = new_poisoned_tensor(KILN_F32, 2, (int64_t[]){3, 2});
    kiln_error err;
    for (int i = 0; i < 2; i++) {
        int64_t bad = i == 0 ? 3 : -4;
        kiln_tensor *indices = index_tensor(KILN_I32, 2, (int64_t[]){2, 2}, (int64_t[]){0, 1, 2, bad});
        assert_int_equal(run_op("scatter_elements", (const kiln_tensor *[]){data, indices, updates}, out, 0, NULL,
                                &err),
                         KILN_ERR_RUNTIME);
        assert_non_null(strstr(err.message, "scatter_elements"));
        assert_non_null(strstr(err.message, i == 0 ? "index 3" : "index -4"));
        assert_non_null(strstr(err.message, "[1, 1]"));
        assert_non_null(strstr(err.message, "-3..2"));
        for (size_t b = 0; b < out->byte_size; b++) /* nothing written: still the poison */
            assert_int_equal(((uint8_t *)out->data)[b], 0x7F);
        kiln_tensor_free(indices);
    }
    /* scatter_nd: each tuple component against its own axis. */
    kiln_tensor *tuples = index_tensor(KILN_I64, 2, (int64_t[]){2, 2}, (int64_t[]){2, 1, 0, 2});
    kiln_tensor *values = random_tensor(KILN_F32, 1, (int64_t[]){2});
    assert_int_equal(run_op("scatter_nd", (const kiln_tensor *[]){data, tuples, values}, out, 0, NULL, &err),
                     KILN_ERR_RUNTIME);
    assert_non_null(strstr(err.message, "scatter_nd: index 2 at indices position [1, 1] is outside -2..1"));
    for (size_t b = 0; b < out->byte_size; b++)
        assert_int_equal(((uint8_t *)out->data)[b], 0x7F);
    kiln_tensor_free(tuples);
    kiln_tensor_free(values);
    kiln_tensor_free(data);
    kiln_tensor_free(updates);
    kiln_tensor_free(out);
}

/* ------------------------------------------------- builder and session */

/* Build x, i and u with dims n in 1..6, m in 2..8 and apply `op`; on success open a session when asked. */
static kiln_status build_scatter(const char *op, kiln_dtype dtype, const char *shape, const char *index_shape,
                                 const char *update_shape, uint32_t attribute_count, const kiln_attribute *attributes,
                                 kiln_program **program, kiln_error *err)
{
    kiln_builder *b;
    kiln_value v[3], y;
    assert_int_equal(kiln_builder_new("scatter", &b, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 6, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "m", 2, 8, err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", dtype, shape, &v[0], err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "i", KILN_I64, index_shape, &v[1], err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "u", dtype, update_shape, &v[2], err), KILN_OK);
    kiln_status status = kiln_builder_add_op_with_attributes(b, op, 3, v, attribute_count, attributes, &y, err);
    if (status == KILN_OK && program) {
        assert_int_equal(kiln_builder_add_output(b, "y", y, err), KILN_OK);
        void *bytes;
        size_t size;
        assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, err), KILN_OK);
        assert_int_equal(kiln_program_load_memory(bytes, size, NULL, program, NULL, err), KILN_OK);
        free(bytes);
    }
    kiln_builder_free(b);
    return status;
}

static void end_to_end_scatter(void **state)
{
    (void)state;
    kiln_program *program;
    kiln_session *session;
    kiln_error err;
    kiln_attribute attrs[] = {{.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 1},
                              {.name = "reduction", .type = KILN_ATTRIBUTE_STRING, .s = "add"}};
    assert_int_equal(build_scatter("scatter_elements", KILN_F32, "[n, 4]", "[n, 2]", "[n, 2]", 2, attrs, &program,
                                   &err),
                     KILN_OK);
    char text[64];
    kiln_program_output_shape_text(program, 0, text, sizeof text);
    assert_string_equal(text, "[n, 4]");
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    kiln_tensor *x = new_poisoned_tensor(KILN_F32, 2, (int64_t[]){2, 4});
    for (int e = 0; e < 8; e++)
        ((float *)x->data)[e] = (float)e;
    kiln_tensor *i = index_tensor(KILN_I64, 2, (int64_t[]){2, 2}, (int64_t[]){3, 3, -4, 1});
    kiln_tensor *u = new_poisoned_tensor(KILN_F32, 2, (int64_t[]){2, 2});
    for (int e = 0; e < 4; e++)
        ((float *)u->data)[e] = 0.5f * (float)(e + 1);
    assert_int_equal(kiln_session_set_input(session, "x", x, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "i", i, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "u", u, &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    static const float expected[] = {0, 1, 2, 4.5f, 5.5f, 7, 6, 7};
    assert_memory_equal(kiln_tensor_const_data(kiln_session_output(session, 0)), expected, sizeof expected);
    /* An index out of range fails the run, naming the node and its op. */
    ((int64_t *)i->data)[2] = 4;
    assert_int_equal(kiln_session_set_input(session, "i", i, &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_ERR_RUNTIME);
    assert_non_null(strstr(err.message, "node 0 (scatter_elements)"));
    assert_non_null(strstr(err.message, "index 4 at indices position [1, 0]"));
    kiln_tensor_free(x);
    kiln_tensor_free(i);
    kiln_tensor_free(u);
    kiln_session_free(session);
    kiln_program_free(program);

    /* scatter_nd: updates [2, n] replace two rows of a [3, n] tensor. */
    assert_int_equal(build_scatter("scatter_nd", KILN_I32, "[3, n]", "[2, 1]", "[2, n]", 0, NULL, &program, &err),
                     KILN_OK);
    kiln_program_output_shape_text(program, 0, text, sizeof text);
    assert_string_equal(text, "[3, n]");
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    x = index_tensor(KILN_I32, 2, (int64_t[]){3, 2}, (int64_t[]){1, 2, 3, 4, 5, 6});
    i = index_tensor(KILN_I64, 2, (int64_t[]){2, 1}, (int64_t[]){-1, 0});
    u = index_tensor(KILN_I32, 2, (int64_t[]){2, 2}, (int64_t[]){7, 8, 9, 10});
    assert_int_equal(kiln_session_set_input(session, "x", x, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "i", i, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "u", u, &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    static const int32_t rows[] = {9, 10, 3, 4, 7, 8};
    assert_memory_equal(kiln_tensor_const_data(kiln_session_output(session, 0)), rows, sizeof rows);
    kiln_tensor_free(x);
    kiln_tensor_free(i);
    kiln_tensor_free(u);
    kiln_session_free(session);
    kiln_program_free(program);
}

/* ----------------------------------------------------- static refusals */

static void scatter_refusals(void **state)
{
    (void)state;
    kiln_error err;
    /* updates not provably of the indices' shape: a counterexample. */
    assert_int_equal(build_scatter("scatter_elements", KILN_F32, "[n, 4]", "[n, 2]", "[m, 2]", 0, NULL, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "node 0 (scatter_elements)"));
    assert_non_null(strstr(err.message, "updates axis 0 (m) equals indices axis 0 (n)"));
    assert_non_null(strstr(err.message, "counterexample"));
    /* indices longer than data on another axis than `axis`. */
    kiln_attribute axis_1 = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 1};
    assert_int_equal(build_scatter("scatter_elements", KILN_F32, "[n, 4]", "[m, 2]", "[m, 2]", 1, &axis_1, NULL,
                                   &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "indices axis 0 (m) is <= data axis 0 (n)"));
    kiln_attribute axis = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 2};
    assert_int_equal(build_scatter("scatter_elements", KILN_F32, "[n, 4]", "[n, 2]", "[n, 2]", 1, &axis, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "axis 2 is outside -2..1"));
    assert_int_equal(build_scatter("scatter_elements", KILN_F32, "[n, 4]", "[n]", "[n]", 0, NULL, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "rank of data"));
    /* Reductions: a name kiln knows, on an arithmetic dtype. */
    kiln_attribute bad = {.name = "reduction", .type = KILN_ATTRIBUTE_STRING, .s = "sum"};
    assert_int_equal(build_scatter("scatter_nd", KILN_F32, "[n, 4]", "[2, 1]", "[2, 4]", 1, &bad, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "reduction must be"));
    kiln_attribute add = {.name = "reduction", .type = KILN_ATTRIBUTE_STRING, .s = "add"};
    assert_int_equal(build_scatter("scatter_nd", KILN_BOOL, "[n, 4]", "[2, 1]", "[2, 4]", 1, &add, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "reduction \"add\" needs an arithmetic dtype"));
    assert_int_equal(build_scatter("scatter_nd", KILN_BOOL, "[n, 4]", "[2, 1]", "[2, 4]", 0, NULL, NULL, &err),
                     KILN_OK);
    /* scatter_nd: symbolic or too long tuples, updates of the wrong rank or sizes. */
    assert_int_equal(build_scatter("scatter_nd", KILN_F32, "[n, 4]", "[2, n]", "[2]", 0, NULL, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "must be a constant"));
    assert_int_equal(build_scatter("scatter_nd", KILN_F32, "[n, 4]", "[2, 3]", "[2]", 0, NULL, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "must be 1..2"));
    assert_int_equal(build_scatter("scatter_nd", KILN_F32, "[n, 4]", "[2, 1]", "[2]", 0, NULL, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "need rank 2"));
    assert_int_equal(build_scatter("scatter_nd", KILN_F32, "[n, 4]", "[2, 1]", "[2, 3]", 0, NULL, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "updates axis 1 (3) equals data axis 1 (4)"));
    assert_int_equal(build_scatter("scatter_nd", KILN_F32, "[n, 4]", "[m, 1]", "[n, 4]", 0, NULL, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "counterexample"));
    /* updates of another dtype. */
    kiln_builder *b;
    kiln_value v[3], y;
    assert_int_equal(kiln_builder_new("scatter", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[4]", &v[0], &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "i", KILN_F32, "[2, 1]", &v[1], &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "u", KILN_F64, "[2]", &v[2], &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "scatter_nd", 3, v, &y, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "indices have dtype f32"));
    kiln_value w;
    assert_int_equal(kiln_builder_add_input(b, "j", KILN_I32, "[2, 1]", &w, &err), KILN_OK);
    v[1] = w;
    assert_int_equal(kiln_builder_add_op(b, "scatter_nd", 3, v, &y, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "f64"));
    kiln_builder_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_ops_are_registered),
        cmocka_unit_test(scatter_elements_matches_reference),
        cmocka_unit_test(duplicates_apply_in_index_order),
        cmocka_unit_test(scatter_nd_matches_reference),
        cmocka_unit_test(half_reductions_round_once),
        cmocka_unit_test(out_of_range_fails_before_writing),
        cmocka_unit_test(end_to_end_scatter),
        cmocka_unit_test(scatter_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
