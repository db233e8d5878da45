"""Duplicate contact merger: dm-block, dm-score and dm-merge.

``matcher/`` finds the pairs, in plain Python without AWS (its README names its modules and
its API). The rest is the pipeline around it:

* ``functions/`` the Lambda entry points, one module per function (``block``, ``score``,
  ``merge``), each wiring its collaborators and routing its events;
* ``reading`` the portal read over several invocations, ``incremental`` a week's read of the
  changes only and the stored index it blocks them against, ``runs`` the weekly run (dm-block);
  ``pipeline`` the block messages between dm-block and dm-score; ``scoring`` one message
  scored and recorded (dm-score);
* ``review`` the links, automatic merges, the sweep and the digest, with ``merging`` (a merge,
  its undo bundle and its undo), ``pages`` (the HTML a reviewer sees) and ``digest`` (the
  weekly mail) (dm-merge);
* ``crm`` (HubSpot) and ``store`` (DynamoDB, SQS, S3) the adapters; ``contract`` the names and
  settings the infra shares.
"""
