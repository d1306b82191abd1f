package main

import "github.com/payout/payout/batch"

// testHooks, set only in a build with the payout_testhooks tag (the command tests' binary), adds
// the tests' seams to a run's configuration.
var testHooks func(*batch.Config)
