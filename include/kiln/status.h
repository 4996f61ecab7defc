/*
 * kiln/status.h — the one error vocabulary shared by every kiln layer.
 *
 * Every fallible kiln function returns a kiln_status (0 = success) and, when
 * the caller passes a kiln_error, fills it with the same code plus a message
 * that names what was wrong. Status values are part of the ABI: once
 * released they are never renumbered or reused; new codes are appended.
 */
#ifndef KILN_STATUS_H
#define KILN_STATUS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the functions a shared libkiln exports; everything else is hidden. */
#if defined(__GNUC__)
#define KILN_API __attribute__((visibility("default")))
#else
#define KILN_API
#endif

/* Marks the calls whose status must not be ignored. */
#if defined(__GNUC__)
#define KILN_NODISCARD __attribute__((warn_unused_result))
#else
#define KILN_NODISCARD
#endif

typedef enum kiln_status {
    KILN_OK = 0,
    KILN_ERR_INVALID_ARGUMENT = 1,   /* a caller passed a bad argument        */
    KILN_ERR_OUT_OF_MEMORY = 2,      /* an allocation failed                  */
    KILN_ERR_IO = 3,                 /* open/read/write/fsync/rename failed   */
    KILN_ERR_TRUNCATED = 4,          /* the file is shorter than it claims    */
    KILN_ERR_BAD_MAGIC = 5,          /* not a kiln artifact                   */
    KILN_ERR_UNSUPPORTED_VERSION = 6,/* format major or section version unreadable */
    KILN_ERR_HEADER_CRC = 7,         /* header checksum mismatch              */
    KILN_ERR_TABLE_CRC = 8,          /* section table checksum mismatch       */
    KILN_ERR_SECTION_CRC = 9,        /* a section's checksum mismatch         */
    KILN_ERR_TRAILER = 10,           /* trailer damaged                       */
    KILN_ERR_DIGEST_MISMATCH = 11,   /* BLAKE2b digest does not match         */
    KILN_ERR_MALFORMED = 12,         /* structure violates the format spec    */
    KILN_ERR_LIMIT = 13,             /* a declared size exceeds a limit       */
    KILN_ERR_UNKNOWN_CRITICAL = 14,  /* unknown critical section/feature      */
    KILN_ERR_UNSUPPORTED_OP = 15,    /* op or op version not in the registry  */
    KILN_ERR_INVALID_PROGRAM = 16,   /* the program breaks a validity rule    */
    KILN_ERR_DTYPE_MISMATCH = 17,    /* input dtype differs from the contract */
    KILN_ERR_RANK_MISMATCH = 18,     /* input rank differs from the contract  */
    KILN_ERR_SHAPE_GUARD = 19,       /* an axis violates its dim constraint   */
    KILN_ERR_MISSING_INPUT = 20,     /* a declared input was not provided     */
    KILN_ERR_UNKNOWN_INPUT = 21,     /* a provided input is not declared      */
    KILN_ERR_NPY = 22,               /* a .npy file is malformed/unsupported  */
    KILN_ERR_RUNTIME = 23,           /* a kernel failed on the given data     */
    KILN_ERR_UNSUPPORTED_DTYPE = 24, /* dtype not supported by this runtime   */
    KILN_ERR_UNSUPPORTED_MODE = 25,  /* e.g. a training-mode artifact         */
    KILN_ERR_SECTION_HASH = 26,      /* a section's BLAKE2b-256 mismatch      */
    KILN_ERR_UNSIGNED = 27,          /* a signature is required, none present */
    KILN_ERR_UNTRUSTED_KEY = 28,     /* signed by a key that is not trusted   */
    KILN_ERR_BAD_SIGNATURE = 29,     /* the signature does not verify         */
    KILN_ERR_INPUT_CHECK = 30,       /* an input value breaks a semantic check */
} kiln_status;

/*
 * Progress of a long operation (verifying, compressing, writing): called
 * with the bytes done so far and the expected total, at most every few
 * megabytes. The total is an estimate; `done` may stop short of it.
 */
typedef void (*kiln_progress_fn)(void *user, uint64_t done, uint64_t total);

/* Size of the message buffer inside kiln_error, including the NUL. */
#define KILN_ERROR_MESSAGE_SIZE 512

/*
 * Detailed error report filled in by a failing call. The struct is
 * caller-allocated; its layout is fixed for the 1.x ABI.
 */
typedef struct kiln_error {
    kiln_status code;
    char message[KILN_ERROR_MESSAGE_SIZE];
} kiln_error;

/**
 * Short, static, human-readable description of a status code.
 * @return a string that is never NULL (unknown codes give "unknown error").
 */
KILN_API const char *kiln_strerror(kiln_status status);

#ifdef __cplusplus
}
#endif

#endif /* KILN_STATUS_H */
