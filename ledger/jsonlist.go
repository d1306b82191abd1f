package ledger

import "encoding/json"

// inJSONList is the right-hand side of an IN that takes its values from one parameter, a JSON
// array: one statement of one shape for any number of values, so a chunk of thousands is one
// short statement to prepare rather than one with thousands of parameters.
const inJSONList = `(SELECT value FROM json_each(?))`

// jsonList is the JSON array of values, the parameter of inJSONList.
func jsonList(values any) string {
	b, err := json.Marshal(values)
	if err != nil {
		// Strings and numbers always marshal.
		panic(err)
	}
	return string(b)
}
