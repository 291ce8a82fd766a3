"""paysdk's tests. tests.support.merchant holds shared assertions, so pytest rewrites them too."""

import pytest

pytest.register_assert_rewrite("tests.support.merchant")
