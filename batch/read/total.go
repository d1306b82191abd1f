package read

import (
	"math"

	"github.com/shopspring/decimal"
)

// Total adds up amounts as ParseAmount returns them (at most 12 digits before the point and 2
// after) exactly, in int64 sen while the sum fits one: a million rows cost a million integer
// additions, not a million big-number ones. The zero Total is zero.
type Total struct {
	carried decimal.Decimal // what was moved out of sen before it could overflow
	sen     int64
}

// Add adds d and returns it in sen (whole sen, for an amount of more decimals than ParseAmount
// allows, which is added exactly all the same).
func (t *Total) Add(d decimal.Decimal) int64 {
	c, exp := d.CoefficientInt64(), d.Exponent()
	if exp < -2 || exp > 0 {
		t.carried = t.carried.Add(d)
		return d.Shift(2).IntPart()
	}
	for ; exp > -2; exp-- {
		c *= 10
	}
	if c < 0 || t.sen > math.MaxInt64-c {
		t.carried, t.sen = t.Decimal(), 0
	}
	t.sen += c
	return c
}

// Decimal is the sum.
func (t Total) Decimal() decimal.Decimal {
	return t.carried.Add(decimal.New(t.sen, -2))
}
