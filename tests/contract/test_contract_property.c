/*
 * test_contract_property.c — random programs of elementwise and reshape
 * ops over random domains (spec/contract.md).
 *
 * Properties:
 *  - a program the checker accepts runs at every point of its declared
 *    domain without a guard failure, with the output shape this test
 *    predicts on its own;
 *  - every point outside the domain (a dim below its minimum, above its
 *    maximum, off its multiple_of, or two axes of one dim disagreeing) is
 *    rejected by a guard before anything runs;
 *  - a program the checker refuses has a point of its domain where it
 *    would indeed go wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>

#include "prng.h"

#define MAX_DIMS 3
#define MAX_AXES 3
#define MAX_STEPS 5

/* An input axis: scale*dim + offset, or the constant `offset` when dim < 0. */
typedef struct axis_form {
    int dim;
    int64_t scale, offset;
} axis_form;

typedef struct dim_form {
    char name[16];
    int64_t min, max, multiple_of;
    bool used; /* by some axis of x */
} dim_form;

typedef enum step_kind {
    STEP_UNARY,
    STEP_WITH_Y,
    STEP_WITH_SCALAR,
    STEP_FLATTEN,    /* reshape [-1] */
    STEP_KEEP_FIRST, /* reshape [0, -1] */
    STEP_HALVE,      /* reshape [2, -1]: valid only where the element count is even */
} step_kind;

typedef struct program_form {
    uint32_t dim_count;
    dim_form dims[MAX_DIMS];
    uint32_t x_rank, y_rank; /* y_rank 0: no second input */
    axis_form x[MAX_AXES], y[MAX_AXES];
    uint32_t step_count;
    step_kind steps[MAX_STEPS];
} program_form;

static int64_t pick(uint64_t *rng, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(lcg_next(rng) % (uint64_t)(hi - lo + 1));
}

static axis_form random_axis(uint64_t *rng, program_form *p)
{
    int kind = (int)pick(rng, 0, 5);
    if (kind == 0)
        return (axis_form){-1, 0, pick(rng, 1, 3)};
    int d = (int)pick(rng, 0, (int64_t)p->dim_count - 1);
    return kind <= 3 ? (axis_form){d, 1, 0} : (axis_form){d, pick(rng, 1, 3), pick(rng, 0, 2)};
}

/*
 * Mostly valid programs, plus some the checker may have to refuse: a y
 * axis that is any other size (not the constant 1), and reshape [2, -1].
 */
static void random_program(uint64_t *rng, program_form *p)
{
    memset(p, 0, sizeof *p);
    p->dim_count = (uint32_t)pick(rng, 1, MAX_DIMS);
    for (uint32_t d = 0; d < p->dim_count; d++) {
        dim_form *dim = &p->dims[d];
        snprintf(dim->name, sizeof dim->name, "d%u", d);
        dim->min = pick(rng, 0, 3);
        dim->max = dim->min + pick(rng, 0, 5);
        dim->multiple_of = pick(rng, 0, 9) < 7 ? 1 : pick(rng, 2, 3);
        int64_t first = (dim->min + dim->multiple_of - 1) / dim->multiple_of * dim->multiple_of;
        if (first > dim->max)
            dim->multiple_of = 1;
    }
    p->x_rank = (uint32_t)pick(rng, 1, MAX_AXES);
    for (uint32_t a = 0; a < p->x_rank; a++) {
        p->x[a] = random_axis(rng, p);
        if (p->x[a].dim >= 0)
            p->dims[p->x[a].dim].used = true;
    }
    /* y broadcasts into x: a suffix of x's axes, each the same size or 1 (or, rarely, anything). */
    if (pick(rng, 0, 1)) {
        p->y_rank = (uint32_t)pick(rng, 1, p->x_rank);
        for (uint32_t a = 0; a < p->y_rank; a++) {
            const axis_form *same = &p->x[p->x_rank - p->y_rank + a];
            bool x_is_one = same->dim < 0 && same->offset == 1;
            int64_t choice = pick(rng, 0, 9);
            if (choice < 6)
                p->y[a] = *same;
            else if (choice < 9 || x_is_one)
                p->y[a] = (axis_form){-1, 0, 1};
            else
                p->y[a] = random_axis(rng, p); /* wild: accepted only if provably equal to x's */
        }
    }
    p->step_count = (uint32_t)pick(rng, 1, MAX_STEPS);
    bool reshaped = false;
    for (uint32_t s = 0; s < p->step_count; s++) {
        step_kind k = pick(rng, 0, 9) < 9 ? (step_kind)pick(rng, 0, 4) : STEP_HALVE;
        if (k == STEP_WITH_Y && (!p->y_rank || reshaped)) /* y only fits x's shape */
            k = STEP_WITH_SCALAR;
        reshaped = reshaped || k >= STEP_FLATTEN;
        p->steps[s] = k;
    }
}

static void format_axis(const program_form *p, const axis_form *a, char *text, size_t size)
{
    if (a->dim < 0)
        snprintf(text, size, "%lld", (long long)a->offset);
    else if (a->scale == 1 && a->offset == 0)
        snprintf(text, size, "%s", p->dims[a->dim].name);
    else
        snprintf(text, size, "%lld*%s + %lld", (long long)a->scale, p->dims[a->dim].name, (long long)a->offset);
}

static void format_shape(const program_form *p, const axis_form *axes, uint32_t rank, char *text, size_t size)
{
    size_t used = (size_t)snprintf(text, size, "[");
    for (uint32_t a = 0; a < rank; a++) {
        char axis[64];
        format_axis(p, &axes[a], axis, sizeof axis);
        used += (size_t)snprintf(text + used, size - used, "%s%s", a ? ", " : "", axis);
    }
    snprintf(text + used, size - used, "]");
}

static kiln_status add_reshape(kiln_builder *b, kiln_value *v, int64_t first, int64_t second, uint32_t count,
                               kiln_error *err)
{
    int64_t target[2] = {first, second};
    kiln_attribute shape = {.name = "shape", .type = KILN_ATTRIBUTE_INTS, .ints = target, .count = count};
    return kiln_builder_add_op_with_attributes(b, "reshape", 1, v, 1, &shape, v, err);
}

/* Build and load the program; @return NULL, with the reason, if the checker refused it. */
static kiln_program *build_program(const program_form *p, char *why, size_t why_size)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, y = 0, v, scalar;
    char shape[256];
    assert_int_equal(kiln_builder_new("random", &b, &err), KILN_OK);
    for (uint32_t d = 0; d < p->dim_count; d++) {
        assert_int_equal(kiln_builder_add_dim(b, p->dims[d].name, p->dims[d].min, p->dims[d].max, &err), KILN_OK);
        assert_int_equal(kiln_builder_set_dim_multiple_of(b, p->dims[d].name, p->dims[d].multiple_of, &err),
                         KILN_OK);
    }
    format_shape(p, p->x, p->x_rank, shape, sizeof shape);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, shape, &x, &err), KILN_OK);
    if (p->y_rank) {
        format_shape(p, p->y, p->y_rank, shape, sizeof shape);
        assert_int_equal(kiln_builder_add_input(b, "y", KILN_F32, shape, &y, &err), KILN_OK);
    }
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F32, 0.5, &scalar, &err), KILN_OK);
    v = x;
    kiln_status status = KILN_OK;
    for (uint32_t s = 0; s < p->step_count && status == KILN_OK; s++) {
        switch (p->steps[s]) {
        case STEP_UNARY: status = kiln_builder_add_op(b, s % 2 ? "neg" : "abs", 1, &v, &v, &err); break;
        case STEP_WITH_Y: status = kiln_builder_add_op(b, "add", 2, (kiln_value[]){v, y}, &v, &err); break;
        case STEP_WITH_SCALAR: status = kiln_builder_add_op(b, "mul", 2, (kiln_value[]){v, scalar}, &v, &err); break;
        case STEP_FLATTEN: status = add_reshape(b, &v, -1, 0, 1, &err); break;
        case STEP_KEEP_FIRST: status = add_reshape(b, &v, 0, -1, 2, &err); break;
        case STEP_HALVE: status = add_reshape(b, &v, 2, -1, 2, &err); break;
        }
    }
    if (status == KILN_OK)
        status = kiln_builder_add_output(b, "out", v, &err);
    void *bytes = NULL;
    size_t size = 0;
    if (status == KILN_OK)
        status = kiln_builder_encode(b, NULL, &bytes, &size, &err);
    kiln_builder_free(b);
    if (status != KILN_OK) {
        assert_int_equal(status, KILN_ERR_INVALID_PROGRAM);
        snprintf(why, why_size, "%s", err.message);
        return NULL;
    }
    kiln_program *program;
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    free(bytes);
    return program;
}

static int64_t axis_size(const axis_form *a, const int64_t *values)
{
    return a->dim < 0 ? a->offset : a->scale * values[a->dim] + a->offset;
}

/* The shape after one step, at a valid point. @return the new rank. */
static uint32_t apply_step(step_kind step, int64_t *shape, uint32_t rank)
{
    int64_t count = 1;
    switch (step) {
    case STEP_FLATTEN:
        for (uint32_t a = 0; a < rank; a++)
            count *= shape[a];
        shape[0] = count;
        return 1;
    case STEP_KEEP_FIRST:
        for (uint32_t a = 1; a < rank; a++)
            count *= shape[a];
        shape[1] = count;
        return 2;
    case STEP_HALVE:
        for (uint32_t a = 0; a < rank; a++)
            count *= shape[a];
        shape[0] = 2;
        shape[1] = count / 2;
        return 2;
    default: return rank;
    }
}

/* x's shape at `values`. @return its rank. */
static uint32_t x_shape(const program_form *p, const int64_t *values, int64_t *shape)
{
    for (uint32_t a = 0; a < p->x_rank; a++)
        shape[a] = axis_size(&p->x[a], values);
    return p->x_rank;
}

/* The output shape this test predicts for a valid point: x's shape through the steps. */
static uint32_t predicted_shape(const program_form *p, const int64_t *values, int64_t *shape)
{
    uint32_t rank = x_shape(p, values, shape);
    for (uint32_t s = 0; s < p->step_count; s++)
        rank = apply_step(p->steps[s], shape, rank);
    return rank;
}

static bool is_value_of(const dim_form *d, int64_t v)
{
    return v >= d->min && v <= d->max && v % d->multiple_of == 0;
}

static int64_t first_value(const dim_form *d)
{
    int64_t v = d->min;
    while (!is_value_of(d, v))
        v++;
    return v;
}

/* The domain's points, in odometer order over the dims' values. */
static void first_point(const program_form *p, int64_t *values)
{
    for (uint32_t d = 0; d < p->dim_count; d++)
        values[d] = first_value(&p->dims[d]);
}

static bool next_point(const program_form *p, int64_t *values)
{
    for (uint32_t d = 0; d < p->dim_count; d++) {
        do
            values[d]++;
        while (values[d] <= p->dims[d].max && !is_value_of(&p->dims[d], values[d]));
        if (values[d] <= p->dims[d].max)
            return true;
        values[d] = first_value(&p->dims[d]);
    }
    return false;
}

/*
 * Why a refusal is right: some point of the domain where a wild y axis
 * differs from x's, or where reshape [2, -1] meets an odd element count.
 */
static bool refusal_is_justified(const program_form *p)
{
    int64_t values[MAX_DIMS];
    first_point(p, values);
    do {
        for (uint32_t a = 0; a < p->y_rank; a++) {
            const axis_form *y = &p->y[a], *x = &p->x[p->x_rank - p->y_rank + a];
            bool y_is_one = y->dim < 0 && y->offset == 1;
            if (!y_is_one && axis_size(x, values) != axis_size(y, values))
                return true;
        }
        int64_t shape[MAX_AXES];
        uint32_t rank = x_shape(p, values, shape);
        for (uint32_t s = 0; s < p->step_count; s++) {
            int64_t count = 1;
            for (uint32_t a = 0; a < rank; a++)
                count *= shape[a];
            if (p->steps[s] == STEP_HALVE && count % 2 != 0)
                return true;
            rank = apply_step(p->steps[s], shape, rank);
        }
    } while (next_point(p, values));
    return false;
}

/*
 * Run at dim values `values`; when `skew` >= 0, the first x axis of dim
 * `skew` gets its size + 1 (two axes of one dim disagreeing).
 * @return the run's status, or KILN_ERR_INVALID_ARGUMENT if some input
 * size would be negative (no such tensor exists).
 */
static kiln_status run_at(kiln_session *session, const program_form *p, const int64_t *values, int skew,
                          kiln_error *err)
{
    int64_t shape[MAX_AXES];
    bool skewed = false;
    kiln_tensor *x = NULL, *y = NULL;
    for (uint32_t a = 0; a < p->x_rank; a++) {
        shape[a] = axis_size(&p->x[a], values);
        if (!skewed && skew >= 0 && p->x[a].dim == skew) {
            shape[a] += 1;
            skewed = true;
        }
        if (shape[a] < 0)
            return KILN_ERR_INVALID_ARGUMENT;
    }
    assert_int_equal(kiln_tensor_new(KILN_F32, p->x_rank, shape, &x, err), KILN_OK);
    memset(kiln_tensor_data(x), 0, kiln_tensor_byte_size(x));
    kiln_status status = kiln_session_set_input(session, "x", x, err);
    if (status == KILN_OK && p->y_rank) {
        for (uint32_t a = 0; a < p->y_rank; a++)
            shape[a] = axis_size(&p->y[a], values);
        assert_int_equal(kiln_tensor_new(KILN_F32, p->y_rank, shape, &y, err), KILN_OK);
        memset(kiln_tensor_data(y), 0, kiln_tensor_byte_size(y));
        status = kiln_session_set_input(session, "y", y, err);
    }
    if (status == KILN_OK)
        status = kiln_session_run(session, err);
    kiln_tensor_free(x);
    kiln_tensor_free(y);
    return status;
}

static void describe(const program_form *p, const int64_t *values, char *text, size_t size)
{
    char x[256], y[256] = "none";
    format_shape(p, p->x, p->x_rank, x, sizeof x);
    if (p->y_rank)
        format_shape(p, p->y, p->y_rank, y, sizeof y);
    size_t used = (size_t)snprintf(text, size, "x %s, y %s, steps", x, y);
    for (uint32_t s = 0; s < p->step_count && used < size; s++)
        used += (size_t)snprintf(text + used, size - used, " %d", (int)p->steps[s]);
    for (uint32_t d = 0; d < p->dim_count && used < size; d++)
        used += (size_t)snprintf(text + used, size - used, "; %s in %lld..%lld multiple_of %lld = %lld",
                                 p->dims[d].name, (long long)p->dims[d].min, (long long)p->dims[d].max,
                                 (long long)p->dims[d].multiple_of, (long long)values[d]);
}

typedef struct tally {
    uint32_t built, refused, inside_runs, outside_runs;
} tally;

/* Every point of the domain runs, with the predicted output shape; disagreeing axes are refused. */
static void check_inside(kiln_session *session, const program_form *p, tally *t)
{
    int64_t values[MAX_DIMS];
    char context[1024];
    kiln_error err;
    first_point(p, values);
    do {
        describe(p, values, context, sizeof context);
        if (run_at(session, p, values, -1, &err) != KILN_OK)
            fail_msg("a point of the domain was refused: %s (%s)", err.message, context);
        t->inside_runs++;
        int64_t want[MAX_AXES];
        uint32_t rank = predicted_shape(p, values, want);
        const kiln_tensor *out = kiln_session_output(session, 0);
        assert_int_equal(kiln_tensor_rank(out), rank);
        for (uint32_t a = 0; a < rank; a++)
            if (kiln_tensor_shape(out)[a] != want[a])
                fail_msg("output axis %u is %lld, predicted %lld (%s)", a, (long long)kiln_tensor_shape(out)[a],
                         (long long)want[a], context);
        for (uint32_t d = 0; d < p->dim_count; d++) {
            int mentions = 0;
            for (uint32_t a = 0; a < p->x_rank; a++)
                mentions += p->x[a].dim == (int)d;
            for (uint32_t a = 0; a < p->y_rank; a++)
                mentions += p->y[a].dim == (int)d;
            if (mentions < 2 || !p->dims[d].used)
                continue;
            kiln_status status = run_at(session, p, values, (int)d, &err);
            if (status != KILN_ERR_SHAPE_GUARD)
                fail_msg("disagreeing axes of %s were not refused by a guard (status %d) (%s)", p->dims[d].name,
                         (int)status, context);
            t->outside_runs++;
        }
    } while (next_point(p, values));
}

/* Each used dim just below, just above, and off its multiple_of; the others at their first value. */
static void check_outside(kiln_session *session, const program_form *p, tally *t)
{
    int64_t values[MAX_DIMS];
    char context[1024];
    kiln_error err;
    for (uint32_t d = 0; d < p->dim_count; d++) {
        if (!p->dims[d].used)
            continue;
        int64_t outside[3] = {p->dims[d].min - 1, p->dims[d].max + 1, -1};
        for (int64_t v = p->dims[d].min; v <= p->dims[d].max && p->dims[d].multiple_of > 1; v++)
            if (v % p->dims[d].multiple_of != 0)
                outside[2] = v;
        for (int i = 0; i < 3; i++) {
            if (outside[i] < 0)
                continue;
            first_point(p, values);
            values[d] = outside[i];
            describe(p, values, context, sizeof context);
            kiln_status status = run_at(session, p, values, -1, &err);
            if (status == KILN_ERR_INVALID_ARGUMENT)
                continue; /* a negative size: no input to try */
            if (status != KILN_ERR_SHAPE_GUARD)
                fail_msg("a point outside the domain was not refused by a guard (status %d) (%s)", (int)status,
                         context);
            t->outside_runs++;
        }
    }
}

static void random_programs_run_inside_and_are_guarded_outside(void **state)
{
    (void)state;
    uint64_t rng = 2026;
    tally t = {0};
    for (int round = 0; round < 400; round++) {
        program_form p;
        random_program(&rng, &p);
        char why[512], context[1024];
        kiln_program *program = build_program(&p, why, sizeof why);
        if (!program) {
            if (!refusal_is_justified(&p)) {
                describe(&p, (int64_t[MAX_DIMS]){0}, context, sizeof context);
                fail_msg("the checker refused a program valid at every point: %s (%s)", why, context);
            }
            t.refused++;
            continue;
        }
        t.built++;
        kiln_session *session;
        kiln_error err;
        assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
        check_inside(session, &p, &t);
        check_outside(session, &p, &t);
        kiln_session_free(session);
        kiln_program_free(program);
    }
    print_message("%u programs built, %u refused by the checker; %u runs inside the domain, %u outside\n", t.built,
                  t.refused, t.inside_runs, t.outside_runs);
    /* The property must be exercised both ways. */
    assert_true(t.built >= 250);
    assert_true(t.refused >= 20);
    assert_true(t.inside_runs >= 2500);
    assert_true(t.outside_runs >= 500);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_programs_run_inside_and_are_guarded_outside),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
