"""Whether a call holds the GIL: another Python thread counts while it runs."""

import sys
import threading
import time


def ticks_during(call):
    """How often another Python thread ran during ``call()`` with a 1 s switch interval: about
    zero were the GIL held for the call, many when it is released."""
    ticks, stop = [0], threading.Event()

    def tick():
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.0001)

    old = sys.getswitchinterval()
    t = threading.Thread(target=tick)
    t.start()
    try:
        time.sleep(0.05)
        sys.setswitchinterval(1.0)
        before = ticks[0]
        call()
        return ticks[0] - before
    finally:
        sys.setswitchinterval(old)
        stop.set()
        t.join()
