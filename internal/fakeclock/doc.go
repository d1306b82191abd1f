// Package fakeclock is the tests' one fake clock: a time that moves only when a test moves it, with timers that fire then, or that jumps to each timer's time as the timer is set.
//
// Any package's tests may use it where code takes a Now func or a clock with timers (the
// sandbox's, the ledger's, a run's pool, through batchtest.Clock). A test that steps through
// waits one by one moves a Clock by hand; a test of a whole run, whose waits are many and all
// sleeps, gives it a jumping one (NewJumping). It imports nothing of the module.
package fakeclock
