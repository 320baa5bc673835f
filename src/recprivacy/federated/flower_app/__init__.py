"""paper 004 on Flower (optional extra ``federated``): a ClientApp per device, a ServerApp
with the honest-but-curious server's strategy, and the two Flower engines (``run``).

Flower reports telemetry and checks for updates over the internet unless told not to; this
package turns both off before Flower is imported (``FLOWER_ENV``), and passes the same
settings to every Flower process it starts.
"""

import os

FLOWER_ENV = {"FLWR_TELEMETRY_ENABLED": "0", "FLWR_DISABLE_UPDATE_CHECK": "1", "RAY_USAGE_STATS_ENABLED": "0"}
for _key, _value in FLOWER_ENV.items():
    os.environ.setdefault(_key, _value)
