// Package fakeclock is the tests' one fake clock: a time that moves only when a test moves it, with timers that fire then.
//
// Any package's tests may use it where code takes a Now func or a clock with timers (the
// sandbox's, the ledger's, a run's pool, through batchtest.Clock). It imports nothing of the
// module.
package fakeclock
