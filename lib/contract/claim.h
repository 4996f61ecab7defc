/*
 * claim.h — a precondition on sizes that a shape rule needs: a == b,
 * a % k == 0 or a >= k over shape expressions (size_claim.h proves them).
 */
#ifndef KILN_LIB_CLAIM_H
#define KILN_LIB_CLAIM_H

#include <stdint.h>

/* A precondition on sizes: a == b, a % k == 0, or a >= k. */
typedef enum kiln_size_claim_kind {
    KILN_CLAIM_EQUAL = 0,       /* a == b */
    KILN_CLAIM_MULTIPLE_OF = 1, /* a % k == 0 */
    KILN_CLAIM_AT_LEAST = 2,    /* a >= k */
} kiln_size_claim_kind;

typedef struct kiln_size_claim {
    kiln_size_claim_kind kind;
    uint32_t a, b; /* expression ids; b only for KILN_CLAIM_EQUAL */
    int64_t k;     /* k >= 1 for KILN_CLAIM_MULTIPLE_OF */
} kiln_size_claim;

#endif
