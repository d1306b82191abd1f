// Package watch is folder mode: a Watcher pays each file dropped into a folder's inbox with a
// batch.Runner, one at a time, and moves it to done or failed with a note that says what to do.
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
