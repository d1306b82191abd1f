// Package pool runs tasks through workers at a rate, each when it is due, stopping on a run of failures and growing to the rate's need.
//
// It knows nothing of payouts: a task says when it is due, whether it must be answered before
// others go and whether it waits for those, and the handler says what came of it. Time is the
// Clock's, so that its tests advance a fake one instead of sleeping.
package pool
