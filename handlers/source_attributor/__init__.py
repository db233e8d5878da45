"""Lead source attributor (document 002): capture arrivals, stitch identities, report sources.

Modules: ``sources`` (the static normalisation table), ``beacon`` (what a beacon may say),
``visitor`` (the first-party id), ``email_hash`` (the keyed hash), ``store`` (DynamoDB and
in-memory stores), ``stitching`` and ``attribution`` (the rules), and one handler module per
function: ``capture``, ``stitch``, ``report``. There is no model in this system.
"""
