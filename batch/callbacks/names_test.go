package callbacks_test

import (
	"testing"

	"github.com/payout/payout/batch/callbacks"
	"github.com/payout/payout/ledger"
)

func TestNamesMatch(t *testing.T) {
	cases := []struct {
		recipient, display string
		match              bool
	}{
		// Case, spacing and punctuation.
		{"Tan Mei Ling", "TAN MEI LING", true},
		{"  Tan   Mei  Ling ", "tan mei ling", true},
		{"Tan Wei-Ming", "TAN WEI MING", true},
		{"Tan Weiming", "TAN WEI MING", true},
		{"Wong Kah Hoe", "WONG KAHHOE", true},
		{"Siti Nur’Aisyah", "SITI NURAISYAH", true},
		{"Ahmad @ Ali bin Abu", "AHMAD ALI BIN ABU", true},
		// Word order: Chinese names surname first or last, with or without a Western name.
		{"Lim Wei Jie", "WEI JIE LIM", true},
		{"Jason Tan Wei Ming", "TAN WEI MING", true},
		{"Tan Wei Ming", "JASON TAN WEI MING", true},
		{"Lee Chee Keong", "Chee Keong, Lee", true},
		// Malay names: bin, binti and their abbreviations, or left off; Mohd and Abd.
		{"MUHAMMAD ALI BIN ABU", "Muhammad Ali Abu", true},
		{"Muhammad Ali bin Abu", "MOHD ALI B. ABU", true},
		{"Mohd Hafiz bin Abdullah", "MUHAMMAD HAFIZ BIN ABDULLAH", true},
		{"Abd Rahman bin Yusof", "ABDUL RAHMAN BN YUSOF", true},
		{"Siti Nurhaliza binti Tarudin", "SITI NURHALIZA", true},
		{"Siti Nurhaliza binti Tarudin", "SITI NURHALIZA BT TARUDIN", true},
		{"Siti Nurhaliza binti Tarudin", "SITI NURHALIZA BTE TARUDIN", true},
		{"Nurul Aisyah", "NURUL AISYAH BINTI RAHMAN", true},
		{"Hidayah binti Kamal", "HIDAYAH KAMAL", true},
		// Titles, before the name or before the father's name.
		{"Encik Azman bin Hashim", "AZMAN BIN HASHIM", true},
		{"Azman bin Hashim", "EN. AZMAN HASHIM", true},
		{"Dato' Sri Haji Ahmad Zahid", "AHMAD ZAHID", true},
		{"Tan Sri Dr. Abdul Aziz bin Haji Omar", "ABDUL AZIZ OMAR", true},
		{"Puan Sri Zainab", "ZAINAB", true},
		{"Mdm Chan Pui Yee", "CHAN PUI YEE", true},
		{"Khairul Anuar bin Hj. Mahmud", "KHAIRUL ANUAR BIN MAHMUD", true},
		{"Hjh Rohani binti Ismail", "ROHANI ISMAIL", true},
		// Indian names: a/l, a/p, s/o, d/o written or left off.
		{"Muthu a/l Krishnan", "MUTHU A/L KRISHNAN", true},
		{"Muthu a/l Krishnan", "MUTHU KRISHNAN", true},
		{"Muthu a/l Krishnan", "MUTHU AL KRISHNAN", true},
		{"Priya a/p Subramaniam", "PRIYA D/O SUBRAMANIAM", true},
		{"Ravi s/o Shanmugam", "RAVI A/L SHANMUGAM", true},
		{"Ramasamy", "RAMASAMY", true},
		// Iban names: anak.
		{"Jimbun anak Lanyau", "JIMBUN AK LANYAU", true},
		// Initials.
		{"M. Ali bin Abu", "MUHAMMAD ALI BIN ABU", true},
		{"Muhammad Ali bin Abu", "M ALI ABU", true},
		{"K. Kavitha a/p Ramasamy", "KAVITHA RAMASAMY", true},
		// A name cut at the bank's length limit, even inside a word.
		{"Siti Nurhaliza binti Tarudin", "SITI NURHALIZA BINTI TARU", true},
		{"Ahmad Faizal bin Ismail", "AHMAD FAIZAL BIN IS", true},
		{"Tan Mei Ling", "TAN MEI LIN", true},
		{"Ahmad Faizal bin Ismail", "AHMAD FAIZAL BI", true},
		{"Muthu a/l Krishnan", "MUTHU A/", false},
		{"Kavitha Ramasamy", "KAVITHA RAMAS", true},
		// Another person.
		{"Tan Mei Ling", "LIM WEI JIE", false},
		{"Tan Mei Ling", "TAN MEI HUA", false},
		{"Muthu a/l Krishnan", "RAVI A/L KRISHNAN", false},
		{"Muhammad Ali bin Abu", "MUHAMMAD ALI BIN AHMAD", false},
		{"Siti Nurhaliza binti Tarudin", "SITI AMINAH BINTI TARUDIN", false},
		{"Nurul Aisyah binti Rahman", "Maybank", false},
		// Too little in common to tell.
		{"Tan Mei Ling", "TAN", false},
		{"Muhammad Ali", "M. A.", false},
		{"Ramasamy", "R", false},
		{"Lee Bin", "LEE HONG", false},
		// Words of a title are names elsewhere: Tan, Toh and En are kept as names.
		{"Tan Wei Ming", "WEI MING", true},
		{"Toh Kok Leong", "LIM KOK LEONG", false},
		{"Lim En Hui", "LIM HUI", true},
		{"Lim En Hui", "LIM HUI MIN", false},
		// Unicode case folding.
		{"KELVIN TAN", "\u212aelvin Tan", true},
	}
	for _, c := range cases {
		got, why := callbacks.NamesMatch(c.recipient, c.display)
		if got != c.match {
			t.Errorf("NamesMatch(%q, %q) = %t (%s), want %t", c.recipient, c.display, got, why, c.match)
		}
		if why == "" {
			t.Errorf("NamesMatch(%q, %q) gives no reason", c.recipient, c.display)
		}
	}
}

func TestCheckName(t *testing.T) {
	cases := []struct {
		recipient, display, check string
	}{
		{"Tan Mei Ling", "", ledger.NameNotCompared},
		{"Tan Mei Ling", "   ", ledger.NameNotCompared},
		{"EMP-0042", "TAN MEI LING", ledger.NameNotCompared},
		{"Tan Mei Ling", "TAN MEI LING", ledger.NameMatch},
		{"Tan Mei Ling", "LIM WEI JIE", ledger.NameMismatch},
	}
	for _, c := range cases {
		if got, why := callbacks.CheckName(c.recipient, c.display); got != c.check || why == "" && got != ledger.NameMatch {
			t.Errorf("CheckName(%q, %q) = %q (%s), want %q", c.recipient, c.display, got, why, c.check)
		}
	}
}
