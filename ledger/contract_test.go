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
	for _, use := range []reflect.Type{
		reflect.TypeFor[ledger.RunWrites](), reflect.TypeFor[ledger.RetryFiles](), reflect.TypeFor[ledger.ReportReads](),
		reflect.TypeFor[ledger.ReconcileStore](), reflect.TypeFor[ledger.CallbackStore](), reflect.TypeFor[ledger.ApprovalStore](),
		reflect.TypeFor[ledger.AuditStore](), reflect.TypeFor[ledger.ConsoleStore](),
	} {
		if !contract.Implements(use) {
			t.Errorf("Ledger lacks operations of %s: is it missing that use?", use.Name())
		}
	}
}
