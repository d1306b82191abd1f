exec(open('make_fods.py').read().split("# 1. two sheets")[0])
def amt(v):  # number shown with thousands separators, as Calc's "#,##0.00"
    return ('c', v)
rows = [
    ([('s','PAY-101'), ('s','Tan, Wei Ming'), ('s','CIMB Bank Berhad'), ('t','030824628194'), ('n','1250'), ('s','Gaji, November')],),
    ([('s','PAY-102'), ('s','Siti &quot;Ct&quot; Aminah'), ('s','Maybank'), ('t','000181590832'), ('n','7939.84'), ('s','line one\nline two')],),
    ([('s','PAY-103'), ('s','Lim Mei Ling'), ('s','Public Bank Berhad'), ('t','2199-3518-190937'), ('n','0.1'), None],),
]
open('calc-export.fods','w').write(doc([table("Payroll", rows)], 'Payroll'))
# a note typed to the right of the table, beyond the header
rows2 = [rows[0], ([('s','PAY-104'), ('s','Ali'), ('s','Maybank'), ('t','1234567890'), ('n','10'), ('s','x'), ('s','note: check')],), rows[2]]
open('note-beyond-header.fods','w').write(doc([table("Payroll", rows2)], 'Payroll'))
