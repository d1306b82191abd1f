# usage: uno_save.py IN OUT FILTER [ACTIVE_SHEET]
import sys, time, subprocess, uno
from com.sun.star.beans import PropertyValue
def pv(n, v):
    p = PropertyValue(); p.Name = n; p.Value = v; return p
src, dst, flt = sys.argv[1:4]
active = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
opts = sys.argv[5] if len(sys.argv) > 5 else None
local = uno.getComponentContext()
resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
for _ in range(60):
    try:
        ctx = resolver.resolve("uno:socket,host=127.0.0.1,port=18472;urp;StarOffice.ComponentContext"); break
    except Exception:
        time.sleep(0.5)
desktop = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
doc = desktop.loadComponentFromURL(uno.systemPathToFileUrl(src), "_blank", 0, ())
if active:
    ctrl = doc.getCurrentController()
    ctrl.setActiveSheet(doc.Sheets.getByName(active))
doc.storeToURL(uno.systemPathToFileUrl(dst), (pv("FilterName", flt),) + ((pv("FilterOptions", opts),) if opts else ()))
doc.close(True)
