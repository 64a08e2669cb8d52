/** Exit codes, documented in docs/operations.md: 0 ok, 1 failure, 2 usage. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** A command line the CLI does not understand: exit 2 with the usage. */
export class UsageError extends Error {}

/** A failure to report as one line, without a stack: exit 1. */
export class CliError extends Error {}
