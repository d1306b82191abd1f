package read_test

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/payout/payout/batch/read"
	"github.com/xuri/excelize/v2"
)

var genBanks = []string{"Maybank", "CIMB Bank Berhad", "Public Bank Berhad", "RHB Bank", "Hong Leong Bank Berhad",
	"AmBank (M) Berhad", "Bank Islam Malaysia Berhad", "Touch 'n Go eWallet"}

// genRow is row i of a generated payroll: valid, unique refs, varied banks and amount forms.
func genRow(i int) []string {
	amount := strconv.Itoa(1000+i%900000) + "." + strconv.Itoa(10+i%90)
	if i%4 == 1 {
		amount = "RM " + amount
	}
	return []string{
		"GEN-" + strconv.Itoa(i), "Employee " + strconv.Itoa(i), genBanks[i%len(genBanks)],
		fmt.Sprintf("0%011d", 100000000+i*7+1), amount, "Gaji November 2026",
	}
}

// genCSV writes a valid payroll CSV of n rows.
func genCSV(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "external_invoice_ref,recipient_reference,bank,third_party_account_no,amount,payment_description")
	for i := range n {
		r := genRow(i)
		fmt.Fprintf(w, "%s,%s,%q,%s,%q,%s\n", r[0], r[1], r[2], r[3], r[4], r[5])
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// genXLSX writes a valid payroll workbook of n rows with excelize's stream writer: accounts as
// text, amounts as numbers where they are plain.
func genXLSX(tb testing.TB, path string, n int) {
	tb.Helper()
	f := excelize.NewFile()
	defer f.Close()
	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		tb.Fatal(err)
	}
	header := []any{read.ColRef, read.ColRecipient, read.ColBank, read.ColAccount, read.ColAmount, read.ColDescription}
	if err := sw.SetRow("A1", header); err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		r := genRow(i)
		var amount any = r[4]
		if v, err := strconv.ParseFloat(r[4], 64); err == nil {
			amount = v
		}
		cell, _ := excelize.CoordinatesToCellName(1, i+2)
		if err := sw.SetRow(cell, []any{r[0], r[1], r[2], r[3], amount, r[5]}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := sw.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.SaveAs(path); err != nil {
		tb.Fatal(err)
	}
}
