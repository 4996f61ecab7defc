/*
 * session_args.h — the options of the verbs that run a program (run,
 * bench, probe) that shape its session: the session's own bound on some
 * dims (--dim NAME=MIN..MAX, or NAME=N for one size) and the largest arena
 * it may allocate (--max-arena SIZE).
 */
#ifndef KILN_TOOLS_SESSION_ARGS_H
#define KILN_TOOLS_SESSION_ARGS_H

#include <kiln/kiln.h>

typedef struct session_args {
    const char *verb;        /* for the messages */
    kiln_dim_bound *dims;    /* names borrowed from dim_names */
    char **dim_names;        /* allocated, one per dim */
    uint32_t dim_count;
    uint32_t dim_capacity;
    uint64_t max_arena_bytes; /* 0: the library's default */
} session_args;

/* Usage text lines for the two options, to paste into a verb's usage. */
#define SESSION_ARGS_USAGE                                                                              \
    "  --dim NAME=MIN..MAX  run in a session narrowed to MIN..MAX of dim NAME, inside the\n"            \
    "                       artifact's range: its arena is planned for that bound and sizes\n"         \
    "                       outside it are refused (NAME=N: N alone; repeatable)\n"                    \
    "  --max-arena SIZE     the largest arena the session may allocate (default 4G): bytes,\n"        \
    "                       or with a unit K, M, G, T (binary) or KB, MB, GB, TB (decimal)\n"

/* Take one --dim: NAME=MIN..MAX or NAME=N, each name once. @return CLI_OK or CLI_USAGE. */
int session_args_take_dim(session_args *args, const char *value);

/* Take --max-arena SIZE. @return CLI_OK or CLI_USAGE. */
int session_args_take_max_arena(session_args *args, const char *value);

/* Put the bound and limit into `options` (borrowing args' names). */
void session_args_apply(const session_args *args, kiln_session_options *options);

/*
 * kiln_session_new with `options` (session_args_apply'd), reporting a
 * failure itself: over the arena limit, the library's message (dims,
 * bytes, narrowings that fit) and how to say it on this command line.
 * @return CLI_OK or CLI_FAILED.
 */
int session_args_new_session(const session_args *args, const kiln_program *program,
                             const kiln_session_options *options, kiln_session **out);

void session_args_release(session_args *args);

#endif
