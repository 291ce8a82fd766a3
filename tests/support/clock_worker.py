"""One callback delivered by a worker process whose clock may be wrong (tests/ledger/test_clocks.py
runs it under libfaketime): it fulfils one payment and prints, as JSON, the outcome and the time
its clock showed.

    python tests/support/clock_worker.py LEDGER_URL REFERENCE LEASE EFFECTS_FILE

The action appends ``done REFERENCE PID`` to the effects file, so the test sees whether it ran.
"""

from __future__ import annotations

import json
import os
import sys
import time

import paysdk


def main(url: str, reference: str, lease: str, effects: str) -> None:
    """Fulfil ``reference`` once through a ledger at ``url``; print the outcome and the clock.

    Args:
        url: the ledger's URL.
        reference: the payment's reference (1000 NGN, verified as the test says).
        lease: the ledger's lease, in seconds.
        effects: the file the action appends its line to.
    """

    def ship(payment: paysdk.VerifiedPayment) -> None:
        with open(effects, "a", encoding="utf-8") as out:
            out.write(f"done {payment.reference} {os.getpid()}\n")

    payment = paysdk.VerifiedPayment(reference=reference, amount=1000, currency="NGN", success=True)
    with paysdk.Ledger(url, lease=float(lease)) as ledger:
        outcome = ledger.fulfil_once(payment, ship).outcome
    print(json.dumps({"outcome": str(outcome), "clock": time.time()}))


if __name__ == "__main__":
    main(*sys.argv[1:])
