/* wait_policy.h — OpenMP's wait policy for the verbs that run programs (wait_policy.c). */
#ifndef KILN_TOOLS_WAIT_POLICY_H
#define KILN_TOOLS_WAIT_POLICY_H

/*
 * If argv[1] is a verb that runs a program and neither OMP_WAIT_POLICY nor
 * GOMP_SPINCOUNT is set, set OMP_WAIT_POLICY=passive and execute the tool
 * again with the same arguments. Returns only when it did not (nothing to
 * do, or the tool could not be executed again); call it first in main.
 */
void cli_choose_wait_policy(char **argv);

#endif
