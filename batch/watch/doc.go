// Package watch is folder mode: a Watcher pays each file dropped into a folder's inbox with a
// batch.Runner, one at a time, and moves it to done or failed with a note that says what to do.
//
// What it writes is for the people who drop files and cannot run a command: each note, report
// and retry file is readable by the group of a group-readable folder (readers.go); a file refused
// as a whole gets a report of its own (refused.go); awaiting-approval holds the files that wait
// for signatures, or for signers to accept rows held as repeats (repeats.go), and WAITING.txt
// lists them (waiting.go).
//
// A file is claimed (moved into processing) only once its size and modification time have held
// still for the settle time; a file a stopped watcher left in processing is resumed first at the
// next start, and a file that changed during its run goes to failed, never to done.
//
// Watchers on several hosts may share one inbox when their ledger is shared (PostgreSQL): one
// leads it (Config.Lead, a lock the ledger's server holds for the leader's session) and the others
// wait; the first pass of the one that takes over resumes what the old leader left in processing,
// whose payouts the run looks up before it sends anything again.
package watch
