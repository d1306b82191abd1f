package read

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// textProblem says what validText refused: a line break (Alt+Enter in a cell, or a quoted
// newline in a CSV) is the usual control character.
func textProblem(s string, max int) string {
	if n := utf8.RuneCountInString(s); n > max {
		return fmt.Sprintf("%d characters, at most %d", n, max)
	}
	if strings.ContainsAny(s, "\r\n") {
		return "it holds a line break: keep the text on one line"
	}
	return "it holds a control character: retype the text"
}

func validText(s string, max int) bool {
	if utf8.RuneCountInString(s) > max {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}
