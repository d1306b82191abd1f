# Types cells into a new Calc document as a user would (setFormula is the input line), saves XLSX.
import sys, time, uno
from com.sun.star.beans import PropertyValue
def pv(n, v):
    p = PropertyValue(); p.Name = n; p.Value = v; return p
local = uno.getComponentContext()
resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
ctx = resolver.resolve("uno:socket,host=127.0.0.1,port=18472;urp;StarOffice.ComponentContext")
desktop = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
doc = desktop.loadComponentFromURL("private:factory/scalc", "_blank", 0, ())
sh = doc.Sheets.getByIndex(0)
sh.Name = "Payroll"
rows = [
 ["external_invoice_ref","recipient_reference","bank","third_party_account_no","amount","payment_description"],
 ["PAY-201","Apostrophe account","Maybank","'000181590832","1,250.00","typed 1,250.00"],
 ["PAY-202","Typed digits account","Maybank","000181590832","100","account typed without apostrophe"],
 ["PAY-203","Text-formatted account","Maybank","@000181590832","RM 99.90","account column formatted @ first"],
 ["PAY-207","Apostrophe amount","Maybank","'000181590832","'300.00",""],
 ["PAY-208","Formula amount","Maybank","'000181590832","=100+23.45",""],
 ["PAY-209","Currency amount","Maybank","'000181590832","RM1,500.50",""],
]
nf = doc.NumberFormats
loc = uno.createUnoStruct("com.sun.star.lang.Locale")
text_fmt = nf.queryKey("@", loc, False)
if text_fmt == -1:
    text_fmt = nf.addNew("@", loc)
for r, row in enumerate(rows):
    for c, v in enumerate(row):
        cell = sh.getCellByPosition(c, r)
        if v.startswith("@"):
            cell.NumberFormat = text_fmt
            v = v[1:]
        cell.setFormula(v)
doc.storeToURL(uno.systemPathToFileUrl(sys.argv[1]), (pv("FilterName", "Calc MS Excel 2007 XML"),))
doc.close(True)
