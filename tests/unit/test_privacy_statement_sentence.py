"""``PrivacyStatement.sentence``: the claim in one sentence for a table cell (issue 48)."""

from recprivacy.privacy.accounting import PrivacyStatement


def test_a_huge_local_epsilon_reads_as_no_meaningful_guarantee():
    s = PrivacyStatement(3.504e7, 0.0, "basic composition", "one upload", "uploads", "local")
    assert s.sentence() == "ε = 3.5 × 10^7, local differential privacy: no meaningful guarantee at this ε"


def test_a_central_claim_with_delta_and_no_claim():
    assert PrivacyStatement(4.0, 1e-6, "RDP", "a user", "training").sentence() == "ε = 4, δ = 1e-06, differential privacy"
    assert PrivacyStatement(10.0, 0.0, "RDP", "a user", "training").sentence() == "ε = 10, differential privacy"
    assert PrivacyStatement.no_guarantee("a user", "lists", "why").sentence() == "No formal differential-privacy guarantee"


def test_joint_dp_says_a_users_own_list_is_not_covered():
    joint = PrivacyStatement(8.0, 1e-6, "RDP", "a user", "training", setting="joint")
    assert joint.sentence() == ("ε = 8, δ = 1e-06, joint differential privacy (not for the list a user is served from "
                                "their own rows)")
    assert str(joint).splitlines()[0] == "(8, 1e-06)-joint differential privacy"
