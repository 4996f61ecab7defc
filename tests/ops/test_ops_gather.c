/*
 * test_ops_gather.c — the indexing and gathering family (gather,
 * gather_elements, gather_nd, slice, cumsum, one_hot, trilu,
 * depth_to_space, space_to_depth) against an independent reference, end to
 * end through the public builder and a session, and the shape rules'
 * static refusals.
 *
 * The references are written here with different algorithms from the
 * kernels: they walk the output one flat index at a time, recover its
 * multi-index by div/mod and compute the source position from the op's
 * definition (slice filters every candidate position of an axis; cumsum
 * re-sums from scratch; depth_to_space follows ONNX's reshape-transpose).
 * All data movement must match bit for bit. Out-of-range indices must fail
 * with KILN_ERR_RUNTIME and never read out of bounds (the ASan run checks).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attribute.h"
#include "op_registry.h"
#include "tensor.h"

#include "family_check.h"
#include "borrowed_attribute.h"
#include "kernel_call.h"
#include "prng.h"
#include "tensor_fixture.h"

/* Every op the family registers can be found by name. */
static void family_ops_are_registered(void **state)
{
    (void)state;
    static const char *const names[] = {"gather", "gather_elements", "gather_nd", "slice", "cumsum",
                                        "one_hot", "trilu", "depth_to_space", "space_to_depth"};
    assert_family_registered(&kiln_ops_gather, names, sizeof names / sizeof names[0]);
}

/* ------------------------------------------------------------ helpers */

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static kiln_tensor *random_tensor(kiln_dtype dtype, uint32_t rank, const int64_t *shape)
{
    kiln_tensor *t = new_poisoned_tensor(dtype, rank, shape);
    for (size_t i = 0; i < t->byte_size; i++)
        ((uint8_t *)t->data)[i] = (uint8_t)xorshift64_star_next(&rng_state);
    return t;
}

/* An index tensor holding `values`. */
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

static kiln_node_attribute int_attr(const char *name, int64_t value)
{
    return borrowed_attribute((kiln_attribute){.name = name, .type = KILN_ATTRIBUTE_INT, .i = value});
}

static kiln_node_attribute ints_attr(const char *name, int64_t *values, uint32_t count)
{
    return borrowed_attribute(
        (kiln_attribute){.name = name, .type = KILN_ATTRIBUTE_INTS, .ints = values, .count = count});
}

/* Element `i` of `t` is element `j` of `src`, byte for byte. */
static void assert_same_element(const kiln_tensor *t, uint64_t i, const kiln_tensor *src, uint64_t j)
{
    size_t w = kiln_dtype_size(t->dtype);
    assert_memory_equal((const uint8_t *)t->data + i * w, (const uint8_t *)src->data + j * w, w);
}

/* ---------------------------------------------------------------- gather */

static void check_gather(kiln_dtype dtype, kiln_dtype index_dtype, uint32_t rank, const int64_t *shape, int64_t axis,
                         uint32_t index_rank, const int64_t *index_shape, const int64_t *values)
{
    kiln_tensor *data = random_tensor(dtype, rank, shape);
    kiln_tensor *indices = index_tensor(index_dtype, index_rank, index_shape, values);
    uint32_t a = (uint32_t)(axis < 0 ? axis + rank : axis);
    int64_t out_shape[KILN_MAX_RANK];
    uint32_t out_rank = 0;
    for (uint32_t i = 0; i < a; i++)
        out_shape[out_rank++] = shape[i];
    for (uint32_t i = 0; i < index_rank; i++)
        out_shape[out_rank++] = index_shape[i];
    for (uint32_t i = a + 1; i < rank; i++)
        out_shape[out_rank++] = shape[i];
    kiln_tensor *out = new_poisoned_tensor(dtype, out_rank, out_shape);
    kiln_node_attribute attr = int_attr("axis", axis);
    kiln_error err;
    assert_int_equal(call_kernel("gather", 2, (const kiln_tensor *[]){data, indices}, out, 1, &attr, &err), KILN_OK);
    for (uint64_t e = 0; e < out->element_count; e++) {
        int64_t oi[KILN_MAX_RANK], di[KILN_MAX_RANK];
        unflatten(e, out_rank, out_shape, oi);
        int64_t v = values[flatten_index(index_rank, index_shape, oi + a)];
        for (uint32_t i = 0; i < rank; i++)
            di[i] = i < a ? oi[i] : i == a ? (v < 0 ? v + shape[a] : v) : oi[i + index_rank - 1];
        assert_same_element(out, e, data, flatten_index(rank, shape, di));
    }
    kiln_tensor_free(data);
    kiln_tensor_free(indices);
    kiln_tensor_free(out);
}

static void gather_matches_reference(void **state)
{
    (void)state;
    check_gather(KILN_F32, KILN_I64, 2, (int64_t[]){5, 3}, 0, 1, (int64_t[]){4}, (int64_t[]){0, 4, -1, -5});
    check_gather(KILN_I16, KILN_I32, 3, (int64_t[]){2, 4, 3}, 1, 2, (int64_t[]){2, 3},
                 (int64_t[]){3, 0, -2, 1, 1, -4});
    check_gather(KILN_U8, KILN_I64, 3, (int64_t[]){2, 4, 3}, -1, 0, NULL, (int64_t[]){2});
    check_gather(KILN_F64, KILN_I32, 1, (int64_t[]){6}, 0, 2, (int64_t[]){2, 2}, (int64_t[]){5, 0, -6, 3});
    /* Zero-size indices give an empty output. */
    check_gather(KILN_F32, KILN_I64, 2, (int64_t[]){3, 2}, 0, 1, (int64_t[]){0}, NULL);
}

static void gather_refuses_out_of_range_at_run_time(void **state)
{
    (void)state;
    kiln_tensor *data = random_tensor(KILN_F32, 2, (int64_t[]){3, 2});
    kiln_error err;
    for (int i = 0; i < 2; i++) {
        int64_t bad = i == 0 ? 3 : -4;
        kiln_tensor *indices = index_tensor(KILN_I32, 2, (int64_t[]){2, 2}, (int64_t[]){0, 1, bad, 2});
        kiln_tensor *out = new_poisoned_tensor(KILN_F32, 3, (int64_t[]){2, 2, 2});
        assert_int_equal(call_kernel("gather", 2, (const kiln_tensor *[]){data, indices}, out, 0, NULL, &err),
                         KILN_ERR_RUNTIME);
        assert_non_null(strstr(err.message, "gather"));
        assert_non_null(strstr(err.message, i == 0 ? "index 3" : "index -4"));
        assert_non_null(strstr(err.message, "[1, 0]"));
        kiln_tensor_free(indices);
        kiln_tensor_free(out);
    }
    kiln_tensor_free(data);
}

/* ------------------------------------------------------- gather_elements */

static void gather_elements_matches_reference(void **state)
{
    (void)state;
    static const int64_t shape[] = {3, 4}, index_shape[] = {2, 4};
    for (int axis = -2; axis < 2; axis++) {
        uint32_t a = (uint32_t)(axis < 0 ? axis + 2 : axis);
        int64_t values[8];
        for (int i = 0; i < 8; i++)
            values[i] = (int64_t)(xorshift64_star_next(&rng_state) % (uint64_t)(2 * shape[a])) - shape[a];
        kiln_tensor *data = random_tensor(KILN_I64, 2, shape);
        kiln_tensor *indices = index_tensor(KILN_I64, 2, index_shape, values);
        kiln_tensor *out = new_poisoned_tensor(KILN_I64, 2, index_shape);
        kiln_node_attribute attr = int_attr("axis", axis);
        kiln_error err;
        assert_int_equal(call_kernel("gather_elements", 2, (const kiln_tensor *[]){data, indices}, out, 1, &attr, &err),
                         KILN_OK);
        for (int64_t r = 0; r < 2; r++)
            for (int64_t c = 0; c < 4; c++) {
                int64_t v = values[r * 4 + c];
                v = v < 0 ? v + shape[a] : v;
                int64_t src = a == 0 ? v * 4 + c : r * 4 + v;
                assert_same_element(out, (uint64_t)(r * 4 + c), data, (uint64_t)src);
            }
        /* Out of range: refused, no read. */
        values[5] = a == 0 ? 3 : -5;
        kiln_tensor *bad = index_tensor(KILN_I64, 2, index_shape, values);
        assert_int_equal(call_kernel("gather_elements", 2, (const kiln_tensor *[]){data, bad}, out, 1, &attr, &err),
                         KILN_ERR_RUNTIME);
        assert_non_null(strstr(err.message, "gather_elements"));
        assert_non_null(strstr(err.message, "[1, 1]"));
        kiln_tensor_free(bad);
        kiln_tensor_free(data);
        kiln_tensor_free(indices);
        kiln_tensor_free(out);
    }
}

/* ------------------------------------------------------------- gather_nd */

static void gather_nd_matches_reference(void **state)
{
    (void)state;
    static const int64_t shape[] = {3, 4, 2};
    kiln_tensor *data = random_tensor(KILN_U16, 3, shape);
    /* k = 2: each tuple picks a row of 2; k = 3 picks elements; k = 1 planes. */
    for (int64_t k = 1; k <= 3; k++) {
        int64_t values[6 * 3];
        for (int i = 0; i < 6 * k; i++) {
            int64_t extent = shape[i % k];
            values[i] = (int64_t)(xorshift64_star_next(&rng_state) % (uint64_t)(2 * extent)) - extent;
        }
        int64_t index_shape[] = {2, 3, k};
        kiln_tensor *indices = index_tensor(KILN_I32, 3, index_shape, values);
        int64_t out_shape[KILN_MAX_RANK] = {2, 3};
        uint32_t out_rank = 2;
        for (int64_t i = k; i < 3; i++)
            out_shape[out_rank++] = shape[i];
        kiln_tensor *out = new_poisoned_tensor(KILN_U16, out_rank, out_shape);
        kiln_error err;
        assert_int_equal(call_kernel("gather_nd", 2, (const kiln_tensor *[]){data, indices}, out, 0, NULL, &err),
                         KILN_OK);
        for (uint64_t e = 0; e < out->element_count; e++) {
            int64_t oi[KILN_MAX_RANK], di[3];
            unflatten(e, out_rank, out_shape, oi);
            for (int64_t c = 0; c < 3; c++) {
                if (c < k) {
                    int64_t v = values[(oi[0] * 3 + oi[1]) * k + c];
                    di[c] = v < 0 ? v + shape[c] : v;
                } else {
                    di[c] = oi[2 + c - k];
                }
            }
            assert_same_element(out, e, data, flatten_index(3, shape, di));
        }
        values[k * 4] = shape[0]; /* tuple 4, component 0: one past the end */
        kiln_tensor *bad = index_tensor(KILN_I32, 3, index_shape, values);
        assert_int_equal(call_kernel("gather_nd", 2, (const kiln_tensor *[]){data, bad}, out, 0, NULL, &err),
                         KILN_ERR_RUNTIME);
        assert_non_null(strstr(err.message, "gather_nd"));
        assert_non_null(strstr(err.message, "index 3"));
        kiln_tensor_free(bad);
        kiln_tensor_free(indices);
        kiln_tensor_free(out);
    }
    kiln_tensor_free(data);
}

/* ----------------------------------------------------------------- slice */

/*
 * The positions a slice visits on an axis of size n, by filtering every
 * candidate: ONNX clamps start to [0, n] ([0, n-1] for negative steps) and
 * end to [0, n] ([-1, n-1]), then visits start, start+step, ... before end.
 */
static int64_t slice_positions(int64_t n, int64_t start, int64_t end, int64_t step, int64_t *positions)
{
    int64_t s = start < 0 ? start + n : start, e = end < 0 ? end + n : end;
    int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? n : n - 1;
    s = s < (step > 0 ? 0 : 0) ? 0 : s > hi ? hi : s;
    e = e < lo ? lo : e > hi ? hi : e;
    int64_t count = 0;
    if (step > 0) {
        for (int64_t j = 0; j < n; j++)
            if (j >= s && j < e && (j - s) % step == 0)
                positions[count++] = j;
    } else {
        for (int64_t j = n - 1; j >= 0; j--)
            if (j <= s && j > e && (s - j) % (-step) == 0)
                positions[count++] = j;
    }
    return count;
}

static void check_slice(uint32_t rank, const int64_t *shape, uint32_t count, int64_t *starts, int64_t *ends,
                        int64_t *axes, int64_t *steps)
{
    kiln_tensor *x = random_tensor(KILN_I32, rank, shape);
    int64_t positions[KILN_MAX_RANK][16], out_shape[KILN_MAX_RANK];
    for (uint32_t i = 0; i < rank; i++) {
        out_shape[i] = shape[i];
        for (int64_t j = 0; j < shape[i]; j++)
            positions[i][j] = j;
    }
    for (uint32_t i = 0; i < count; i++) {
        int64_t a = axes ? axes[i] : (int64_t)i;
        if (a < 0)
            a += rank;
        out_shape[a] = slice_positions(shape[a], starts[i], ends[i], steps ? steps[i] : 1, positions[a]);
    }
    kiln_tensor *out = new_poisoned_tensor(KILN_I32, rank, out_shape);
    kiln_node_attribute attrs[4];
    uint32_t n = 0;
    if (axes)
        attrs[n++] = ints_attr("axes", axes, count);
    attrs[n++] = ints_attr("ends", ends, count);
    attrs[n++] = ints_attr("starts", starts, count);
    if (steps)
        attrs[n++] = ints_attr("steps", steps, count);
    kiln_error err;
    assert_int_equal(call_kernel("slice", 1, (const kiln_tensor *[]){x}, out, n, attrs, &err), KILN_OK);
    for (uint64_t e = 0; e < out->element_count; e++) {
        int64_t oi[KILN_MAX_RANK], xi[KILN_MAX_RANK];
        unflatten(e, rank, out_shape, oi);
        for (uint32_t i = 0; i < rank; i++)
            xi[i] = positions[i][oi[i]];
        assert_same_element(out, e, x, flatten_index(rank, shape, xi));
    }
    kiln_tensor_free(x);
    kiln_tensor_free(out);
}

static void slice_matches_reference(void **state)
{
    (void)state;
    static const int64_t shape[] = {5, 7};
    static const int64_t bounds[] = {-9, -7, -3, -1, 0, 1, 4, 6, 9, INT64_MAX, INT64_MIN};
    static const int64_t step_values[] = {1, 2, 3, -1, -2, -5, INT64_MAX, -INT64_MAX};
    for (size_t s = 0; s < 11; s++)
        for (size_t e = 0; e < 11; e++)
            for (size_t t = 0; t < 8; t++) {
                int64_t starts[] = {bounds[s]}, ends[] = {bounds[e]}, axes[] = {-1}, steps[] = {step_values[t]};
                check_slice(2, shape, 1, starts, ends, axes, steps);
            }
    /* Defaults: axes 0..n-1 and steps 1. */
    check_slice(2, shape, 2, (int64_t[]){1, -3}, (int64_t[]){4, 100}, NULL, NULL);
    /* Zero-size input and empty slices. */
    check_slice(2, (int64_t[]){0, 3}, 1, (int64_t[]){0}, (int64_t[]){2}, (int64_t[]){1}, NULL);
    check_slice(2, shape, 1, (int64_t[]){3}, (int64_t[]){1}, NULL, NULL);
    /* Rank 4, one or two axes sliced: the trailing axes taken whole and the
     * sliced axis before them copy as one run (a channel split), the axes
     * before by the odometer; a step or a partial inner axis stops the run. */
    const int64_t image[] = {2, 5, 3, 4}, single[] = {1, 6, 1, 4};
    for (int64_t axis = 0; axis < 4; axis++) {
        check_slice(4, image, 1, (int64_t[]){1}, (int64_t[]){3}, (int64_t[]){axis}, NULL);
        check_slice(4, image, 1, (int64_t[]){0}, (int64_t[]){INT64_MAX}, (int64_t[]){axis}, (int64_t[]){2});
        check_slice(4, single, 1, (int64_t[]){0}, (int64_t[]){3}, (int64_t[]){axis}, NULL);
    }
    check_slice(4, image, 2, (int64_t[]){1, 1}, (int64_t[]){4, 3}, (int64_t[]){1, 3}, NULL);
    check_slice(4, image, 2, (int64_t[]){0, 2}, (int64_t[]){1, 0}, (int64_t[]){0, 2}, (int64_t[]){1, -1});
    check_slice(4, image, 2, (int64_t[]){0, 0}, (int64_t[]){2, 5}, (int64_t[]){0, 1}, NULL); /* the whole tensor */
}

/* ---------------------------------------------------------------- cumsum */

static void cumsum_matches_reference(void **state)
{
    (void)state;
    static const int64_t shape[] = {2, 5, 3};
    for (int flags = 0; flags < 4; flags++)
        for (int axis = -3; axis < 3; axis++) {
            uint32_t a = (uint32_t)(axis < 0 ? axis + 3 : axis);
            bool exclusive = flags & 1, reverse = flags & 2;
            kiln_tensor *x = random_tensor(KILN_I8, 3, shape); /* i8: sums wrap */
            kiln_tensor *xf = new_poisoned_tensor(KILN_F64, 3, shape);
            for (uint64_t i = 0; i < x->element_count; i++)
                ((double *)xf->data)[i] = (double)((int8_t *)x->data)[i] / 4.0;
            kiln_tensor *out = new_poisoned_tensor(KILN_I8, 3, shape), *outf = new_poisoned_tensor(KILN_F64, 3, shape);
            kiln_node_attribute attrs[] = {int_attr("axis", axis), int_attr("exclusive", exclusive),
                                           int_attr("reverse", reverse)};
            kiln_error err;
            assert_int_equal(call_kernel("cumsum", 1, (const kiln_tensor *[]){x}, out, 3, attrs, &err), KILN_OK);
            assert_int_equal(call_kernel("cumsum", 1, (const kiln_tensor *[]){xf}, outf, 3, attrs, &err), KILN_OK);
            for (uint64_t e = 0; e < out->element_count; e++) {
                int64_t idx[3];
                unflatten(e, 3, shape, idx);
                int64_t sum = 0;
                double fsum = 0;
                for (int64_t j = 0; j < shape[a]; j++) {
                    bool in = reverse ? (exclusive ? j > idx[a] : j >= idx[a])
                                      : (exclusive ? j < idx[a] : j <= idx[a]);
                    if (!in)
                        continue;
                    int64_t src[3] = {idx[0], idx[1], idx[2]};
                    src[a] = j;
                    uint64_t f = flatten_index(3, shape, src);
                    sum += ((int8_t *)x->data)[f];
                    fsum += ((double *)xf->data)[f];
                }
                assert_int_equal(((int8_t *)out->data)[e], (int8_t)(uint8_t)(sum & 0xFF));
                assert_true(((double *)outf->data)[e] == fsum); /* quarters: exact */
            }
            kiln_tensor_free(x);
            kiln_tensor_free(xf);
            kiln_tensor_free(out);
            kiln_tensor_free(outf);
        }
}

/* --------------------------------------------------------------- one_hot */

static void one_hot_matches_reference(void **state)
{
    (void)state;
    int64_t values[] = {0, 3, -1, 4, -5, 2}; /* depth 4: 4 and -5 are out of range */
    kiln_tensor *indices = index_tensor(KILN_I64, 2, (int64_t[]){2, 3}, values);
    for (int axis = -3; axis < 3; axis++) {
        uint32_t a = (uint32_t)(axis < 0 ? axis + 3 : axis);
        int64_t out_shape[3], j = 0;
        for (uint32_t i = 0; i < 3; i++)
            out_shape[i] = i == a ? 4 : (int64_t[]){2, 3}[j++];
        kiln_tensor *out = new_poisoned_tensor(KILN_I32, 3, out_shape);
        kiln_node_attribute attrs[] = {
            int_attr("axis", axis),
            int_attr("depth", 4),
            {.name = "dtype", .type = KILN_ATTRIBUTE_STRING, .s = "i32"},
            {.name = "off_value", .type = KILN_ATTRIBUTE_FLOAT, .f = -2},
            {.name = "on_value", .type = KILN_ATTRIBUTE_FLOAT, .f = 7},
        };
        kiln_error err;
        assert_int_equal(call_kernel("one_hot", 1, (const kiln_tensor *[]){indices}, out, 5, attrs, &err), KILN_OK);
        for (uint64_t e = 0; e < out->element_count; e++) {
            int64_t oi[3], ii[2], k = 0;
            unflatten(e, 3, out_shape, oi);
            for (uint32_t i = 0; i < 3; i++)
                if (i != a)
                    ii[k++] = oi[i];
            int64_t v = values[ii[0] * 3 + ii[1]];
            bool on = v == oi[a] || v + 4 == oi[a];
            assert_int_equal(((int32_t *)out->data)[e], on ? 7 : -2);
        }
        kiln_tensor_free(out);
    }
    /* Defaults: f32, on 1, off 0, last axis. */
    kiln_tensor *out = new_poisoned_tensor(KILN_F32, 3, (int64_t[]){2, 3, 4});
    kiln_node_attribute depth = int_attr("depth", 4);
    kiln_error err;
    assert_int_equal(call_kernel("one_hot", 1, (const kiln_tensor *[]){indices}, out, 1, &depth, &err), KILN_OK);
    for (int i = 0; i < 6; i++)
        for (int d = 0; d < 4; d++)
            assert_true(((float *)out->data)[i * 4 + d] == (values[i] == d || values[i] + 4 == d ? 1.0f : 0.0f));
    kiln_tensor_free(out);
    kiln_tensor_free(indices);
}

/* ----------------------------------------------------------------- trilu */

static void trilu_matches_reference(void **state)
{
    (void)state;
    static const int64_t shape[] = {2, 3, 5};
    for (int upper = 0; upper < 2; upper++)
        for (int64_t k = -4; k <= 6; k++) {
            kiln_tensor *x = random_tensor(KILN_F32, 3, shape), *out = new_poisoned_tensor(KILN_F32, 3, shape);
            kiln_node_attribute attrs[] = {int_attr("k", k), int_attr("upper", upper)};
            kiln_error err;
            assert_int_equal(call_kernel("trilu", 1, (const kiln_tensor *[]){x}, out, 2, attrs, &err), KILN_OK);
            for (uint64_t e = 0; e < out->element_count; e++) {
                int64_t i = (int64_t)(e / 5 % 3), j = (int64_t)(e % 5);
                /* Upper keeps the diagonals k, k+1, ...; lower keeps ..., k-1, k. */
                bool keep = upper ? i + k <= j : j <= i + k;
                if (keep)
                    assert_same_element(out, e, x, e);
                else
                    assert_int_equal(((uint32_t *)out->data)[e], 0);
            }
            kiln_tensor_free(x);
            kiln_tensor_free(out);
        }
}

/* -------------------------------------------- depth_to_space / space_to_depth */

/*
 * ONNX depth_to_space, DCR: reshape x to [N, b, b, C', H, W], transpose to
 * [N, C', H, b, W, b] and reshape. CRD: reshape to [N, C', b, b, H, W] and
 * transpose to the same order. space_to_depth: reshape to [N, C, H', b,
 * W', b], transpose to [N, b, b, C, H', W'].
 */
static void block_ops_match_reference(void **state)
{
    (void)state;
    static const int64_t b = 2, n = 2, c = 3, h = 2, w = 3;
    int64_t depth_shape[] = {n, c * b * b, h, w}, space_shape[] = {n, c, h * b, w * b};
    for (int mode = 0; mode < 2; mode++) {
        kiln_tensor *x = random_tensor(KILN_I16, 4, depth_shape), *y = new_poisoned_tensor(KILN_I16, 4, space_shape);
        kiln_node_attribute attrs[] = {int_attr("blocksize", b),
                                       {.name = "mode", .type = KILN_ATTRIBUTE_STRING, .s = mode ? "CRD" : "DCR"}};
        kiln_error err;
        assert_int_equal(call_kernel("depth_to_space", 1, (const kiln_tensor *[]){x}, y, 2, attrs, &err), KILN_OK);
        /* Walk the transposed 6-D tensor in order: it is y. */
        int64_t t6[6] = {n, c, h, b, w, b};
        for (uint64_t e = 0; e < y->element_count; e++) {
            int64_t i6[6];
            unflatten(e, 6, t6, i6); /* [n, c', h, i, w, j] */
            int64_t src6[6], shape6[6];
            if (mode == 0) {
                int64_t s[6] = {i6[0], i6[3], i6[5], i6[1], i6[2], i6[4]}, d[6] = {n, b, b, c, h, w};
                memcpy(src6, s, sizeof s);
                memcpy(shape6, d, sizeof d);
            } else {
                int64_t s[6] = {i6[0], i6[1], i6[3], i6[5], i6[2], i6[4]}, d[6] = {n, c, b, b, h, w};
                memcpy(src6, s, sizeof s);
                memcpy(shape6, d, sizeof d);
            }
            assert_same_element(y, e, x, flatten_index(6, shape6, src6));
        }
        kiln_tensor_free(x);
        kiln_tensor_free(y);
    }
    kiln_tensor *x = random_tensor(KILN_F64, 4, space_shape), *y = new_poisoned_tensor(KILN_F64, 4, depth_shape);
    kiln_node_attribute blocksize = int_attr("blocksize", b);
    kiln_error err;
    assert_int_equal(call_kernel("space_to_depth", 1, (const kiln_tensor *[]){x}, y, 1, &blocksize, &err), KILN_OK);
    int64_t t6[6] = {n, b, b, c, h, w}, shape6[6] = {n, c, h, b, w, b};
    for (uint64_t e = 0; e < y->element_count; e++) {
        int64_t i6[6];
        unflatten(e, 6, t6, i6); /* [n, i, j, c, h', w'] */
        int64_t src6[6] = {i6[0], i6[3], i6[4], i6[1], i6[5], i6[2]};
        assert_same_element(y, e, x, flatten_index(6, shape6, src6));
    }
    kiln_tensor_free(x);
    kiln_tensor_free(y);
}

/* ------------------------------------------------- builder and session */

typedef struct built {
    kiln_builder *builder;
    kiln_program *program;
    kiln_session *session;
} built;

static kiln_builder *new_builder(void)
{
    kiln_builder *b;
    kiln_error err;
    assert_int_equal(kiln_builder_new("gather", &b, &err), KILN_OK);
    return b;
}

static void open_session(built *p)
{
    void *bytes;
    size_t size;
    kiln_error err;
    kiln_status status = kiln_builder_encode(p->builder, NULL, &bytes, &size, &err);
    if (status != KILN_OK)
        print_error("encode: %s\n", err.message);
    assert_int_equal(status, KILN_OK);
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &p->program, NULL, &err), KILN_OK);
    free(bytes);
    assert_int_equal(kiln_session_new(p->program, NULL, &p->session, &err), KILN_OK);
}

static void close_built(built *p)
{
    kiln_session_free(p->session);
    kiln_program_free(p->program);
    kiln_builder_free(p->builder);
}

static void assert_output_text(const kiln_program *program, const char *expected)
{
    char text[128];
    kiln_program_output_shape_text(program, 0, text, sizeof text);
    assert_string_equal(text, expected);
}

/* A one-op program over input "x" (and "i" when index_shape is set), dim n in 1..6. */
static void build_one(built *p, const char *op, kiln_dtype dtype, const char *shape, const char *index_shape,
                      uint32_t attribute_count, const kiln_attribute *attributes)
{
    kiln_error err;
    kiln_value v[2], y;
    p->builder = new_builder();
    assert_int_equal(kiln_builder_add_dim(p->builder, "n", 1, 6, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(p->builder, "x", dtype, shape, &v[0], &err), KILN_OK);
    if (index_shape)
        assert_int_equal(kiln_builder_add_input(p->builder, "i", KILN_I64, index_shape, &v[1], &err), KILN_OK);
    kiln_status status = kiln_builder_add_op_with_attributes(p->builder, op, index_shape ? 2 : 1, v,
                                                             attribute_count, attributes, &y, &err);
    if (status != KILN_OK)
        print_error("%s\n", err.message);
    assert_int_equal(status, KILN_OK);
    assert_int_equal(kiln_builder_add_output(p->builder, "y", y, &err), KILN_OK);
    open_session(p);
}

static kiln_status run_session(built *p, kiln_tensor *x, kiln_tensor *i, kiln_error *err)
{
    assert_int_equal(kiln_session_set_input(p->session, "x", x, err), KILN_OK);
    if (i)
        assert_int_equal(kiln_session_set_input(p->session, "i", i, err), KILN_OK);
    return kiln_session_run(p->session, err);
}

static void end_to_end_gather(void **state)
{
    (void)state;
    built p = {0};
    kiln_attribute axis = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 1};
    build_one(&p, "gather", KILN_F32, "[n, 4]", "[2, n]", 1, &axis);
    assert_output_text(p.program, "[n, 2, n]");
    kiln_tensor *x = random_tensor(KILN_F32, 2, (int64_t[]){3, 4});
    kiln_tensor *i = index_tensor(KILN_I64, 2, (int64_t[]){2, 3}, (int64_t[]){0, -1, 2, 3, -4, 1});
    kiln_error err;
    assert_int_equal(run_session(&p, x, i, &err), KILN_OK);
    const kiln_tensor *out = kiln_session_output(p.session, 0);
    assert_int_equal(kiln_tensor_shape(out)[0], 3);
    assert_int_equal(kiln_tensor_shape(out)[2], 3);
    static const int64_t cols[] = {0, 3, 2, 3, 0, 1};
    for (int r = 0; r < 3; r++)
        for (int j = 0; j < 6; j++)
            assert_same_element(out, (uint64_t)(r * 6 + j), x, (uint64_t)(r * 4 + cols[j]));
    kiln_tensor_free(i);
    /* An index out of range fails the run, naming the node and its op. */
    i = index_tensor(KILN_I64, 2, (int64_t[]){2, 3}, (int64_t[]){0, 1, 2, 4, 0, 0});
    assert_int_equal(run_session(&p, x, i, &err), KILN_ERR_RUNTIME);
    assert_non_null(strstr(err.message, "node 0 (gather)"));
    assert_non_null(strstr(err.message, "index 4"));
    assert_non_null(strstr(err.message, "[1, 0]"));
    kiln_tensor_free(i);
    kiln_tensor_free(x);
    close_built(&p);
}

static void end_to_end_gather_elements_and_nd(void **state)
{
    (void)state;
    built p = {0};
    build_one(&p, "gather_elements", KILN_I32, "[n, 3]", "[n, 2]", 0, NULL);
    assert_output_text(p.program, "[n, 2]");
    kiln_tensor *x = random_tensor(KILN_I32, 2, (int64_t[]){2, 3});
    kiln_tensor *i = index_tensor(KILN_I64, 2, (int64_t[]){2, 2}, (int64_t[]){1, -1, 0, 1});
    kiln_error err;
    assert_int_equal(run_session(&p, x, i, &err), KILN_OK);
    const kiln_tensor *out = kiln_session_output(p.session, 0);
    static const uint64_t src[] = {3, 4, 0, 4}; /* (row i, col c) of x */
    for (int e = 0; e < 4; e++)
        assert_same_element(out, (uint64_t)e, x, src[e]);
    kiln_tensor_free(i);
    kiln_tensor_free(x);
    close_built(&p);

    build_one(&p, "gather_nd", KILN_U8, "[n, 3, 2]", "[4, 2]", 0, NULL);
    assert_output_text(p.program, "[4, 2]");
    x = random_tensor(KILN_U8, 3, (int64_t[]){5, 3, 2});
    i = index_tensor(KILN_I64, 2, (int64_t[]){4, 2}, (int64_t[]){4, 2, -5, 0, 0, -1, 2, 1});
    assert_int_equal(run_session(&p, x, i, &err), KILN_OK);
    out = kiln_session_output(p.session, 0);
    static const uint64_t rows[] = {4 * 3 + 2, 0, 2, 2 * 3 + 1};
    for (int t = 0; t < 4; t++)
        for (int j = 0; j < 2; j++)
            assert_same_element(out, (uint64_t)(t * 2 + j), x, rows[t] * 2 + (uint64_t)j);
    kiln_tensor_free(i);
    kiln_tensor_free(x);
    close_built(&p);
}

static void end_to_end_slice(void **state)
{
    (void)state;
    static const struct {
        int64_t start, end;
        const char *shape;
        int64_t rows; /* at n = 5 */
        int64_t first;
    } cases[] = {
        {1, INT64_MAX, "[n - 1, 3]", 4, 1},
        {0, INT64_MAX, "[n, 3]", 5, 0},
        {0, 1, "[1, 3]", 1, 0},
        {-1, INT64_MAX, "[1, 3]", 1, 4},
        {1, 6, "[n - 1, 3]", 4, 1}, /* end 6 >= every n: to the end */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        built p = {0};
        kiln_attribute attrs[] = {
            {.name = "starts", .type = KILN_ATTRIBUTE_INTS, .ints = &cases[c].start, .count = 1},
            {.name = "ends", .type = KILN_ATTRIBUTE_INTS, .ints = &cases[c].end, .count = 1},
        };
        build_one(&p, "slice", KILN_I64, "[n, 3]", NULL, 2, attrs);
        assert_output_text(p.program, cases[c].shape);
        kiln_tensor *x = random_tensor(KILN_I64, 2, (int64_t[]){5, 3});
        kiln_error err;
        assert_int_equal(run_session(&p, x, NULL, &err), KILN_OK);
        const kiln_tensor *out = kiln_session_output(p.session, 0);
        assert_int_equal(kiln_tensor_shape(out)[0], cases[c].rows);
        assert_memory_equal(kiln_tensor_const_data(out), (int64_t *)x->data + cases[c].first * 3,
                            (size_t)cases[c].rows * 3 * sizeof(int64_t));
        kiln_tensor_free(x);
        close_built(&p);
    }
}

/*
 * The slices of a symbolic axis PyTorch exports with dynamic axes (issue
 * #17): x[:-1] (end -1), x[1:-2], x[-3:-1], torch.flip (step -1 from -1 to
 * -INT64_MAX), and whole-axis strides. Each symbolic size is checked
 * against the clamping reference (slice_positions) at every n of the
 * domain 1..6 — the kernel itself refuses an output whose size the shape
 * rule got wrong — and the elements against it too.
 */
static void symbolic_slices_match_the_reference_at_every_size(void **state)
{
    (void)state;
    static const struct {
        int64_t start, end, step;
        const char *shape;
    } cases[] = {
        {0, -1, 1, "[n - 1, 3]"},
        {0, -6, 1, "[n - 6, 3]"}, /* needs n >= 6: built over n in 6..6 below */
        {-1, -1, 1, "[0, 3]"},
        {-1, INT64_MIN, -1, "[n, 3]"},
        {-1, -INT64_MAX, -1, "[n, 3]"},
        {INT64_MAX, INT64_MIN, -1, "[n, 3]"},
        {-1, INT64_MIN, -2, "[(n + 1) / 2, 3]"},
        {0, INT64_MAX, 3, "[(n + 2) / 3, 3]"},
        {-6, 6, 2, "[(n + 1) / 2, 3]"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        built p = {0};
        kiln_attribute attrs[] = {
            {.name = "starts", .type = KILN_ATTRIBUTE_INTS, .ints = &cases[c].start, .count = 1},
            {.name = "ends", .type = KILN_ATTRIBUTE_INTS, .ints = &cases[c].end, .count = 1},
            {.name = "steps", .type = KILN_ATTRIBUTE_INTS, .ints = &cases[c].step, .count = 1},
        };
        kiln_error err;
        kiln_value x_value, y;
        int64_t first = cases[c].end == -6 ? 6 : 1;
        p.builder = new_builder();
        assert_int_equal(kiln_builder_add_dim(p.builder, "n", first, 6, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_input(p.builder, "x", KILN_I64, "[n, 3]", &x_value, &err), KILN_OK);
        kiln_status status = kiln_builder_add_op_with_attributes(p.builder, "slice", 1, &x_value, 3, attrs, &y, &err);
        if (status != KILN_OK)
            print_error("case %zu: %s\n", c, err.message);
        assert_int_equal(status, KILN_OK);
        assert_int_equal(kiln_builder_add_output(p.builder, "y", y, &err), KILN_OK);
        open_session(&p);
        assert_output_text(p.program, cases[c].shape);
        for (int64_t n = first; n <= 6; n++) {
            int64_t positions[8];
            int64_t rows = slice_positions(n, cases[c].start, cases[c].end, cases[c].step, positions);
            kiln_tensor *x = random_tensor(KILN_I64, 2, (int64_t[]){n, 3});
            assert_int_equal(run_session(&p, x, NULL, &err), KILN_OK);
            const kiln_tensor *out = kiln_session_output(p.session, 0);
            assert_int_equal(kiln_tensor_shape(out)[0], rows);
            for (int64_t r = 0; r < rows; r++)
                assert_memory_equal((const int64_t *)kiln_tensor_const_data(out) + r * 3,
                                    (int64_t *)x->data + positions[r] * 3, 3 * sizeof(int64_t));
            kiln_tensor_free(x);
        }
        close_built(&p);
    }
}

static void end_to_end_cumsum_one_hot_trilu(void **state)
{
    (void)state;
    built p = {0};
    kiln_attribute axis = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 0};
    build_one(&p, "cumsum", KILN_I32, "[n]", NULL, 1, &axis);
    assert_output_text(p.program, "[n]");
    kiln_tensor *x = index_tensor(KILN_I32, 1, (int64_t[]){4}, (int64_t[]){1, 2, 3, INT32_MAX});
    kiln_error err;
    assert_int_equal(run_session(&p, x, NULL, &err), KILN_OK);
    const int32_t *o = kiln_tensor_const_data(kiln_session_output(p.session, 0));
    assert_int_equal(o[2], 6);
    assert_int_equal(o[3], (int32_t)(uint32_t)(6u + (uint32_t)INT32_MAX)); /* wraps */
    kiln_tensor_free(x);
    close_built(&p);

    kiln_attribute depth[] = {{.name = "depth", .type = KILN_ATTRIBUTE_INT, .i = 3},
                              {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 0}};
    build_one(&p, "one_hot", KILN_I64, "[n]", NULL, 2, depth);
    assert_output_text(p.program, "[3, n]");
    x = index_tensor(KILN_I64, 1, (int64_t[]){2}, (int64_t[]){2, 9});
    assert_int_equal(run_session(&p, x, NULL, &err), KILN_OK);
    const float *f = kiln_tensor_const_data(kiln_session_output(p.session, 0));
    static const float expected[] = {0, 0, 0, 0, 1, 0}; /* 9: all off */
    assert_memory_equal(f, expected, sizeof expected);
    kiln_tensor_free(x);
    close_built(&p);

    build_one(&p, "trilu", KILN_F64, "[n, n]", NULL, 0, NULL);
    assert_output_text(p.program, "[n, n]");
    x = random_tensor(KILN_F64, 2, (int64_t[]){3, 3});
    assert_int_equal(run_session(&p, x, NULL, &err), KILN_OK);
    const double *d = kiln_tensor_const_data(kiln_session_output(p.session, 0));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double want = j >= i ? ((double *)x->data)[i * 3 + j] : 0.0;
            assert_memory_equal(&d[i * 3 + j], &want, sizeof want);
        }
    kiln_tensor_free(x);
    close_built(&p);
}

static void end_to_end_block_ops(void **state)
{
    (void)state;
    built p = {0};
    kiln_attribute blocksize = {.name = "blocksize", .type = KILN_ATTRIBUTE_INT, .i = 2};
    build_one(&p, "depth_to_space", KILN_U8, "[n, 8, n, 3]", NULL, 1, &blocksize);
    assert_output_text(p.program, "[n, 2, 2*n, 6]");
    kiln_tensor *x = random_tensor(KILN_U8, 4, (int64_t[]){2, 8, 2, 3});
    kiln_error err;
    assert_int_equal(run_session(&p, x, NULL, &err), KILN_OK);
    const kiln_tensor *out = kiln_session_output(p.session, 0);
    assert_int_equal(kiln_tensor_shape(out)[2], 4);
    /* Back again with space_to_depth: the round trip is the identity (DCR). */
    kiln_tensor *y = new_poisoned_tensor(KILN_U8, 4, (int64_t[]){2, 8, 2, 3});
    kiln_node_attribute b = int_attr("blocksize", 2);
    assert_int_equal(call_kernel("space_to_depth", 1, (const kiln_tensor *[]){out}, y, 1, &b, &err), KILN_OK);
    assert_memory_equal(y->data, x->data, x->byte_size);
    kiln_tensor_free(y);
    kiln_tensor_free(x);
    close_built(&p);

    /* A symbolic channel count proven divisible through its structure. */
    build_one(&p, "depth_to_space", KILN_F32, "[n, 4*n, 2, 2]", NULL, 1, &blocksize);
    assert_output_text(p.program, "[n, n, 4, 4]");
    close_built(&p);

    build_one(&p, "space_to_depth", KILN_F32, "[1, n, 4, 2*n]", NULL, 1, &blocksize);
    assert_output_text(p.program, "[1, 4*n, 2, n]");
    close_built(&p);
}

/* ----------------------------------------------------- static refusals */

/* Build x (and i) with dims n in 1..6, m in 2..8 and apply `op`. */
static kiln_status try_build(const char *op, kiln_dtype dtype, const char *shape, const char *index_shape,
                             uint32_t attribute_count, const kiln_attribute *attributes, kiln_error *err)
{
    kiln_builder *b = new_builder();
    kiln_value v[2], y;
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 6, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "m", 2, 8, err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", dtype, shape, &v[0], err), KILN_OK);
    if (index_shape)
        assert_int_equal(kiln_builder_add_input(b, "i", KILN_I32, index_shape, &v[1], err), KILN_OK);
    kiln_status status =
        kiln_builder_add_op_with_attributes(b, op, index_shape ? 2 : 1, v, attribute_count, attributes, &y, err);
    kiln_builder_free(b);
    return status;
}

static kiln_status try_slice(const char *shape, int64_t start, int64_t end, int64_t step, kiln_error *err)
{
    kiln_attribute attrs[] = {
        {.name = "starts", .type = KILN_ATTRIBUTE_INTS, .ints = &start, .count = 1},
        {.name = "ends", .type = KILN_ATTRIBUTE_INTS, .ints = &end, .count = 1},
        {.name = "steps", .type = KILN_ATTRIBUTE_INTS, .ints = &step, .count = 1},
    };
    return try_build("slice", KILN_F32, shape, NULL, 3, attrs, err);
}

static void slice_refuses_unsupported_forms(void **state)
{
    (void)state;
    kiln_error err;
    /* A step other than 1 that does not take a symbolic axis whole. */
    assert_int_equal(try_slice("[n]", -2, INT64_MIN, -1, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "node 0 (slice)"));
    assert_non_null(strstr(err.message, "step -1"));
    assert_int_equal(try_slice("[n]", 1, INT64_MAX, 2, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "only whole"));
    /* A negative end past the start on the smallest axis: where m + end <
     * start ONNX clamps the slice to empty, which m - 3 would not say. */
    assert_int_equal(try_slice("[m]", 1, -2, 1, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "counterexample: m=2"));
    assert_int_equal(try_slice("[m]", -3, -1, 1, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "counterexample: m=2"));
    /* A negative start with a positive finite end stays unsupported. */
    assert_int_equal(try_slice("[n]", -1, 3, 1, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "not supported"));
    /* Start beyond the smallest axis: counterexample. */
    assert_int_equal(try_slice("[m]", 3, INT64_MAX, 1, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "counterexample: m=2"));
    /* A finite end the axis may not reach. */
    assert_int_equal(try_slice("[m]", 0, 4, 1, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "counterexample"));
    /* Negative start longer than the axis may be. */
    assert_int_equal(try_slice("[m]", -3, INT64_MAX, 1, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, ">= 3"));
    /* Step 0, and bad attribute lengths. */
    assert_int_equal(try_slice("[4]", 0, 2, 0, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "step is 0"));
    /* Supported forms. */
    assert_int_equal(try_slice("[m]", 2, INT64_MAX, 1, &err), KILN_OK);
    assert_int_equal(try_slice("[m]", 0, 2, 1, &err), KILN_OK);
    assert_int_equal(try_slice("[m]", -2, INT64_MAX, 1, &err), KILN_OK);
    assert_int_equal(try_slice("[7]", -1, INT64_MIN, -2, &err), KILN_OK);
}

static void block_ops_refuse_unproven_divisibility(void **state)
{
    (void)state;
    kiln_error err;
    kiln_attribute b = {.name = "blocksize", .type = KILN_ATTRIBUTE_INT, .i = 2};
    assert_int_equal(try_build("depth_to_space", KILN_F32, "[1, m, 2, 2]", NULL, 1, &b, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "node 0 (depth_to_space)"));
    assert_non_null(strstr(err.message, "a multiple of 4"));
    assert_non_null(strstr(err.message, "counterexample: m=2"));
    assert_int_equal(try_build("depth_to_space", KILN_F32, "[1, 6, 2, 2]", NULL, 1, &b, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_int_equal(try_build("space_to_depth", KILN_F32, "[1, 3, 4, m]", NULL, 1, &b, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "width"));
    assert_non_null(strstr(err.message, "counterexample: m=3"));
    kiln_attribute bad_mode[] = {b, {.name = "mode", .type = KILN_ATTRIBUTE_STRING, .s = "XYZ"}};
    assert_int_equal(try_build("depth_to_space", KILN_F32, "[1, 4, 2, 2]", NULL, 2, bad_mode, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_int_equal(try_build("depth_to_space", KILN_F32, "[1, 4, 2]", NULL, 1, &b, &err),
                     KILN_ERR_INVALID_PROGRAM);
}

static void gather_family_refusals(void **state)
{
    (void)state;
    kiln_error err;
    /* gather_elements: another axis of indices not provably <= data's. */
    assert_int_equal(try_build("gather_elements", KILN_F32, "[n, 3]", "[2, m]", 0, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "indices axis 1 (m)"));
    assert_int_equal(try_build("gather_elements", KILN_F32, "[n, 3]", "[2, 4]", 0, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_int_equal(try_build("gather_elements", KILN_F32, "[n, 3]", "[2, 2]", 0, NULL, &err), KILN_OK);
    assert_int_equal(try_build("gather_elements", KILN_F32, "[n, 3]", "[2]", 0, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    /* gather: axis out of range, float indices, scalar data. */
    kiln_attribute axis = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 2};
    assert_int_equal(try_build("gather", KILN_F32, "[n, 3]", "[2]", 1, &axis, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "axis 2"));
    assert_int_equal(try_build("gather", KILN_F32, "[]", "[2]", 0, NULL, &err), KILN_ERR_INVALID_PROGRAM);
    /* gather_nd: symbolic or too long last axis. */
    assert_int_equal(try_build("gather_nd", KILN_F32, "[n, 3]", "[2, n]", 0, NULL, &err), KILN_ERR_INVALID_PROGRAM);
    assert_int_equal(try_build("gather_nd", KILN_F32, "[n, 3]", "[2, 3]", 0, NULL, &err), KILN_ERR_INVALID_PROGRAM);
    kiln_attribute batch = {.name = "batch_dims", .type = KILN_ATTRIBUTE_INT, .i = 1};
    assert_int_equal(try_build("gather_nd", KILN_F32, "[n, 3]", "[n, 1]", 1, &batch, &err), KILN_ERR_INVALID_PROGRAM);
    /* cumsum, one_hot, trilu. */
    assert_int_equal(try_build("cumsum", KILN_BOOL, "[n]", NULL, 0, NULL, &err), KILN_ERR_INVALID_PROGRAM);
    assert_int_equal(try_build("one_hot", KILN_I64, "[n]", NULL, 0, NULL, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "depth"));
    kiln_attribute one_hot_bad[] = {{.name = "depth", .type = KILN_ATTRIBUTE_INT, .i = 2},
                                    {.name = "dtype", .type = KILN_ATTRIBUTE_STRING, .s = "c64"}};
    assert_int_equal(try_build("one_hot", KILN_I64, "[n]", NULL, 2, one_hot_bad, &err), KILN_ERR_INVALID_PROGRAM);
    assert_int_equal(try_build("one_hot", KILN_F32, "[n]", NULL, 1, one_hot_bad, &err), KILN_ERR_INVALID_PROGRAM);
    assert_int_equal(try_build("trilu", KILN_F32, "[n]", NULL, 0, NULL, &err), KILN_ERR_INVALID_PROGRAM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_ops_are_registered),
        cmocka_unit_test(gather_matches_reference),
        cmocka_unit_test(gather_refuses_out_of_range_at_run_time),
        cmocka_unit_test(gather_elements_matches_reference),
        cmocka_unit_test(gather_nd_matches_reference),
        cmocka_unit_test(slice_matches_reference),
        cmocka_unit_test(cumsum_matches_reference),
        cmocka_unit_test(one_hot_matches_reference),
        cmocka_unit_test(trilu_matches_reference),
        cmocka_unit_test(block_ops_match_reference),
        cmocka_unit_test(end_to_end_gather),
        cmocka_unit_test(symbolic_slices_match_the_reference_at_every_size),
        cmocka_unit_test(end_to_end_gather_elements_and_nd),
        cmocka_unit_test(end_to_end_slice),
        cmocka_unit_test(end_to_end_cumsum_one_hot_trilu),
        cmocka_unit_test(end_to_end_block_ops),
        cmocka_unit_test(slice_refuses_unsupported_forms),
        cmocka_unit_test(block_ops_refuse_unproven_divisibility),
        cmocka_unit_test(gather_family_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
