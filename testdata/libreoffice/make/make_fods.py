# Writes flat ODS files for LibreOffice to convert.
import sys, html
HEAD = ["external_invoice_ref","recipient_reference","bank","third_party_account_no","amount","payment_description"]

def cell(v):
    if v is None:
        return '<table:table-cell/>'
    kind = v[0]
    if kind == 's':
        return f'<table:table-cell office:value-type="string" calcext:value-type="string"><text:p>{v[1]}</text:p></table:table-cell>'
    if kind == 't':  # text cell in a column formatted "@"
        return f'<table:table-cell table:style-name="ceText" office:value-type="string" calcext:value-type="string"><text:p>{v[1]}</text:p></table:table-cell>'
    if kind == 'n':
        return f'<table:table-cell office:value-type="float" office:value="{v[1]}" calcext:value-type="float"><text:p>{v[1]}</text:p></table:table-cell>'
    if kind == 'f':  # formula, cached value
        return f'<table:table-cell table:formula="of:={html.escape(v[1])}" office:value-type="float" office:value="{v[2]}" calcext:value-type="float"><text:p>{v[2]}</text:p></table:table-cell>'
    if kind == 'fs':  # formula giving text
        return f'<table:table-cell table:formula="of:={html.escape(v[1])}" office:value-type="string" office:string-value="{v[2]}" calcext:value-type="string"><text:p>{v[2]}</text:p></table:table-cell>'
    if kind == 'b':
        return f'<table:table-cell table:style-name="ceBool" office:value-type="boolean" office:boolean-value="{v[1]}" calcext:value-type="boolean"><text:p>{v[1].upper()}</text:p></table:table-cell>'
    if kind == 'd':
        return f'<table:table-cell table:style-name="ceDate" office:value-type="date" office:date-value="{v[1]}" calcext:value-type="date"><text:p>{v[1]}</text:p></table:table-cell>'
    if kind == 'p':
        return f'<table:table-cell table:style-name="cePct" office:value-type="percentage" office:value="{v[1]}" calcext:value-type="percentage"><text:p>{v[1]}</text:p></table:table-cell>'
    if kind == 'c':
        return f'<table:table-cell table:style-name="ceCur" office:value-type="currency" office:currency="MYR" office:value="{v[1]}" calcext:value-type="currency"><text:p>RM{v[1]}</text:p></table:table-cell>'
    raise ValueError(kind)

def row(cells, hidden=False):
    vis = ' table:visibility="collapse"' if hidden else ''
    return f'<table:table-row{vis}>' + ''.join(cell(c) for c in cells) + '</table:table-row>'

def table(name, rows, hidden=False, trailing=False):
    st = ' table:style-name="taHidden"' if hidden else ' table:style-name="taShown"'
    out = f'<table:table table:name="{name}"{st}>'
    out += '<table:table-column table:number-columns-repeated="1024"/>'
    out += row([('s', h) for h in HEAD])
    for r in rows:
        out += row(r[0], r[1] if len(r) > 1 else False)
    if trailing:
        # Calc writes trailing formatted empty rows/columns like these.
        out += '<table:table-row table:number-rows-repeated="20"><table:table-cell table:style-name="ceText" table:number-columns-repeated="10"/></table:table-row>'
    out += '</table:table>'
    return out

def doc(tables, active):
    return f'''<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:number="urn:oasis:names:tc:opendocument:xmlns:datastyle:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" xmlns:of="urn:oasis:names:tc:opendocument:xmlns:of:1.2" xmlns:config="urn:oasis:names:tc:opendocument:xmlns:config:1.0" xmlns:calcext="urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0" office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
<office:settings><config:config-item-set config:name="ooo:view-settings"><config:config-item-map-indexed config:name="Views"><config:config-item-map-entry>
<config:config-item config:name="ViewId" config:type="string">view1</config:config-item>
<config:config-item config:name="ActiveTable" config:type="string">{active}</config:config-item>
</config:config-item-map-entry></config:config-item-map-indexed></config:config-item-set></office:settings>
<office:automatic-styles>
<number:text-style style:name="NText"><number:text-content/></number:text-style>
<number:boolean-style style:name="NBool"><number:boolean/></number:boolean-style>
<number:date-style style:name="NDate"><number:year number:style="long"/><number:text>-</number:text><number:month number:style="long"/><number:text>-</number:text><number:day number:style="long"/></number:date-style>
<number:percentage-style style:name="NPct"><number:number number:decimal-places="2" number:min-integer-digits="1"/><number:text>%</number:text></number:percentage-style>
<number:currency-style style:name="NCur"><number:currency-symbol>RM</number:currency-symbol><number:number number:decimal-places="2" number:min-integer-digits="1" number:grouping="true"/></number:currency-style>
<style:style style:name="taShown" style:family="table"><style:table-properties table:display="true"/></style:style>
<style:style style:name="taHidden" style:family="table"><style:table-properties table:display="false"/></style:style>
<style:style style:name="ceText" style:family="table-cell" style:data-style-name="NText"/>
<style:style style:name="ceBool" style:family="table-cell" style:data-style-name="NBool"/>
<style:style style:name="ceDate" style:family="table-cell" style:data-style-name="NDate"/>
<style:style style:name="cePct" style:family="table-cell" style:data-style-name="NPct"/>
<style:style style:name="ceCur" style:family="table-cell" style:data-style-name="NCur"/>
</office:automatic-styles>
<office:body><office:spreadsheet>
{''.join(tables)}
</office:spreadsheet></office:body></office:document>
'''

def ok(i, acct=('t','000181590832'), amt=('s','100.00'), bank='Maybank'):
    return [('s', f'PAY-{i:03d}'), ('s', f'Person {i}'), ('s', bank), acct, amt, ('s', 'Gaji')]

# 1. two sheets, second active, third hidden; the active one has hidden row, formulas, numbers.
old = table("October", [(ok(900),)])
hid = table("Secret", [(ok(950),)], hidden=True)
nov = table("November", [
    (ok(1),),                                   # line 2 fine
    (ok(2, acct=('n','131860913909')),),        # line 3 account number -> rejected
    (ok(3), True),                              # line 4 hidden -> rejected
    (ok(4, amt=('f','100+23.45','123.45')),),   # line 5 formula amount -> rejected
    (ok(5, acct=('fs','"0001"&"23456789"','000123456789')),),  # line 6 formula account -> rejected
    (ok(6, amt=('n','250.5')),),                # line 7 numeric amount fine
    (ok(7, amt=('c','99.9')),),                 # line 8 currency amount fine
    (ok(8, amt=('t','75.25')),),                # line 9 amount text "@" fine
], trailing=True)
open('two-sheets.fods','w').write(doc([old, nov, hid], 'November'))

# 2. odd types in amount: boolean, date, percentage.
odd = table("Payroll", [
    (ok(1),),
    (ok(2, amt=('b','true')),),                  # boolean amount -> must not pay 1
    (ok(3, amt=('d','2026-11-30')),),            # date amount -> must not pay 46 thousand
    (ok(4, amt=('p','0.5')),),                   # percentage 50% -> ?
    (ok(5, acct=('b','true')),),                 # boolean account
], trailing=True)
open('odd-types.fods','w').write(doc([odd], 'Payroll'))

# 3. hidden active sheet.
open('hidden-active.fods','w').write(doc([table("Visible", [(ok(1),)]), table("Hidden", [(ok(2),)], hidden=True)], 'Hidden'))
