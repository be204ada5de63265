"""The arm controller's network settings (IP method, manual IP, DNS, gateway, subnet, factory reset flag): kept
and handed back as set; nothing here is networked (``configure``'s IP only names a simulated arm)."""

from __future__ import annotations

from app.trossen_arm.enums import IPMethod
from app.trossen_arm.kept_settings import KeptConfig


class NetworkConfig(KeptConfig):
    """Network getters and setters (kept, not simulated)."""

    def get_ip_method(self) -> IPMethod:
        """The IP method (kept; nothing is networked)."""
        return self._setting("ip_method")

    def set_ip_method(self, method: IPMethod = IPMethod.manual) -> None:
        """Set the IP method (kept; nothing is networked)."""
        self._keep("ip_method", IPMethod(method))

    def get_manual_ip(self) -> str:
        """The manual IP (kept)."""
        return self._setting("manual_ip")

    def set_manual_ip(self, manual_ip: str = "192.168.1.2") -> None:
        """Set the manual IP (kept)."""
        self._keep("manual_ip", str(manual_ip))

    def get_dns(self) -> str:
        """The DNS (kept)."""
        return self._setting("dns")

    def set_dns(self, dns: str = "8.8.8.8") -> None:
        """Set the DNS (kept)."""
        self._keep("dns", str(dns))

    def get_gateway(self) -> str:
        """The gateway (kept)."""
        return self._setting("gateway")

    def set_gateway(self, gateway: str = "192.168.1.1") -> None:
        """Set the gateway (kept)."""
        self._keep("gateway", str(gateway))

    def get_subnet(self) -> str:
        """The subnet (kept)."""
        return self._setting("subnet")

    def set_subnet(self, subnet: str = "255.255.255.0") -> None:
        """Set the subnet (kept)."""
        self._keep("subnet", str(subnet))

    def get_factory_reset_flag(self) -> bool:
        """The factory reset flag (kept)."""
        return self._setting("factory_reset_flag")

    def set_factory_reset_flag(self, flag: bool = True) -> None:
        """Set the factory reset flag (kept)."""
        self._keep("factory_reset_flag", bool(flag))
