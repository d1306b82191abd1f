package ledger

import "encoding/json"

// inJSONList is the right-hand side of an IN that takes its values from one parameter, a JSON
// array: one statement of one shape for any number of values, so a chunk of thousands is one
// short statement to prepare rather than one with thousands of parameters.
const inJSONList = `(SELECT value FROM json_each(?))`

// payoutsOfJSONList is a FROM clause that joins each value of one parameter, a JSON array of
// references, to its payout, "p": one probe of the payouts' key a value, where an IN list would
// first copy the values into a temporary index (a third of what looking a chunk up costs).
const payoutsOfJSONList = `json_each(?) AS list JOIN payouts AS p ON p.ref = list.value`

// jsonList is the JSON array of values, the parameter of inJSONList and payoutsOfJSONList.
func jsonList(values any) string {
	b, err := json.Marshal(values)
	if err != nil {
		// Strings and numbers always marshal.
		panic(err)
	}
	return string(b)
}
