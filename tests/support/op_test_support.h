/*
 * op_test_support.h — what op tests share: f32/f64 element access, a
 * random fill, tolerant tensor comparison, attribute sets for calling
 * kernels directly, and the text-format round trip. Generators are in
 * prng.h, fresh tensors in tensor_fixture.h, the registry check in
 * family_check.h, direct kernel runs in kernel_call.h, public attributes as
 * a kernel's in borrowed_attribute.h (all included here).
 */
#ifndef KILN_TESTS_OP_TEST_SUPPORT_H
#define KILN_TESTS_OP_TEST_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kiln/kiln.h>

#include "attribute.h"
#include "borrowed_attribute.h"
#include "family_check.h"
#include "kernel_call.h"
#include "prng.h"
#include "tensor.h"
#include "tensor_fixture.h"

double ots_load(const kiln_tensor *t, uint64_t i);
void ots_store(kiln_tensor *t, uint64_t i, long double v);

/* Values in -4..4 in steps of 1/8 (exact products); with `special_one_in` > 0,
 * about one element in that many is NaN or ±inf. */
void ots_fill(kiln_tensor *t, prng *rng, uint64_t special_one_in);

/* Every element within tolerance (f32_tol or f64_tol, relative to 1 + |expected|); NaN matches NaN, inf itself. */
void ots_assert_close(const kiln_tensor *actual, const kiln_tensor *expected, const char *what, double f32_tol,
                     double f64_tol);

typedef struct attribute_set {
    kiln_node_attribute items[8];
    uint32_t count;
} attribute_set;

void add_ints(attribute_set *set, const char *name, int64_t *values, uint32_t count);
void add_int(attribute_set *set, const char *name, int64_t value);
void add_string(attribute_set *set, const char *name, const char *value);

/*
 * Seal `builder` (freed), check output 0's shape text when `output_shape`
 * is not NULL, disassemble, check the text holds each of `fragments`,
 * assemble the text back (as `name`) and check the artifact is byte for
 * byte the same.
 */
void ots_assert_text_round_trip(kiln_builder *builder, const char *name, const char *output_shape,
                                const char *const *fragments, size_t fragment_count);

/* `status` is KILN_ERR_INVALID_PROGRAM and the message holds each fragment. */
void ots_assert_refused(kiln_status status, const kiln_error *err, const char *const *fragments, size_t count);

#define OTS_COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define REFUSED(STATUS, ...)                                                                          \
    do {                                                                                              \
        static const char *const fragments_[] = {__VA_ARGS__};                                        \
        ots_assert_refused((STATUS), &err, fragments_, OTS_COUNT(fragments_));                          \
    } while (0)

#endif
