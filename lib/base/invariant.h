/*
 * invariant.h — debug-only internal assertions.
 *
 * KILN_ASSERT(condition) states what the code around it has already
 * established — an index below its count, an offset inside its arena, a
 * cursor inside its buffer — so that a debug build catches the day a change
 * breaks it, at the line that assumed it. It is never a check of input: a
 * malformed artifact, a wrong shape or a bad argument gets a kiln_error
 * naming the problem, in every build.
 *
 * A debug build (meson's buildtype=debug, which defines KILN_DEBUG_ASSERTS)
 * prints the condition, file and line to stderr and aborts. Other builds
 * compile the assertion away without evaluating the condition, which must
 * therefore have no side effects.
 */
#ifndef KILN_BASE_INVARIANT_H
#define KILN_BASE_INVARIANT_H

#if defined(KILN_DEBUG_ASSERTS)
/* Report a broken invariant and abort; only KILN_ASSERT calls it. */
_Noreturn void kiln_invariant_broken(const char *condition, const char *file, int line);
#define KILN_ASSERT(condition) \
    ((condition) ? (void)0 : kiln_invariant_broken(#condition, __FILE__, __LINE__))
#else
/* sizeof keeps the condition compiled (names must exist) but never evaluated. */
#define KILN_ASSERT(condition) ((void)sizeof(!(condition)))
#endif

#endif
