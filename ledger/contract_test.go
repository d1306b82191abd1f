package ledger_test

import (
	"reflect"
	"testing"

	"github.com/payout/payout/ledger"
)

// TestContractNamesEveryOperation: every exported method of the SQLite engine is an operation of
// the contract (ledger.Ledger), or a test's own: a
// method added to DB alone would be a way around the seam that a second engine lacks.
func TestContractNamesEveryOperation(t *testing.T) {
	t.Parallel()
	testOnly := map[string]bool{"QuickCheck": true, "RetryOf": true, "RunRows": true, "SchemaVersion": true} // export_test.go
	contract := reflect.TypeOf((*ledger.Ledger)(nil)).Elem()
	db := reflect.TypeOf((*ledger.DB)(nil))
	for i := range db.NumMethod() {
		name := db.Method(i).Name
		if _, ok := contract.MethodByName(name); ok || testOnly[name] {
			continue
		}
		t.Errorf("(*DB).%s is in no interface of contract.go: add it to the use that calls it", name)
	}
	if contract.NumMethod() < 40 {
		t.Errorf("the contract has %d operations: is Ledger missing a use?", contract.NumMethod())
	}
}
