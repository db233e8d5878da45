"""The firmographic providers: the port (``base``) and its adapters, chosen by ``factory``.

``lookup(domain)`` returns the company's fields in the lead's vocabulary (``LEAD_FIELDS``),
None when the provider knows no such company, or raises ``ProviderUnavailable`` when it could
not answer now (outage, throttling, a refused or exhausted key): the lead is then marked
``enrichment_pending`` and retried later. ``RateLimited`` carries the seconds the provider
asked us to wait. The key is read from Secrets Manager at call time (cached briefly) through
the caller's ``key`` function, so a rotated key needs no redeploy.

Two real adapters, chosen by stack config ``systems.ler.enrichmentProvider``:

- ``pdl``: People Data Labs Company Enrichment API (``pdl``);
- ``apollo``: Apollo Organization Enrichment API (``apollo``).

Clearbit's adapter is gone: Clearbit's free platform was sunset on 30 April 2025 and no new
keys are issued since the product moved into HubSpot's Breeze Intelligence, and nothing
documented shows the old ``company.clearbit.com/v2/companies/find`` still serving keys.
"""
