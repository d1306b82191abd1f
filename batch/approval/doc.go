// Package approval judges the signatures and refusals beside a file against its plan: who approved it, who refused it, and what is missing.
//
// Approvals (maker-checker): the ledger's policy says how many distinct people must sign a
// file's plan statement before a run pays it; people are the principals of OpenSSH keys listed
// in an allowed_signers file, never operating-system accounts. The judge only answers; the run
// asks it, and records what it accepted.
//
// The same signatures, in the namespace payout-repeat, accept the rows of a file held as possible
// repeats where nobody can run it again with --allow-repeat (folder mode): JudgeRepeats.
package approval
