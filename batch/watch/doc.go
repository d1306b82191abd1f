// Package watch is folder mode: a Watcher pays each file dropped into a folder's inbox with a
// batch.Runner, one at a time, and moves it to done or failed with a note that says what to do.
//
// A file is claimed (moved into processing) only once its size and modification time have held
// still for the settle time; a file a stopped watcher left in processing is resumed first at the
// next start, and a file that changed during its run goes to failed, never to done.
package watch
