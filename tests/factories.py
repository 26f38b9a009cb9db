import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import Group

from casefiles.models import Case, Membership

TEST_PASSWORD = "correct horse battery staple"
_hashed = None


def _password_hash() -> str:
    # Argon2 is deliberately slow: hash the shared test password once per process.
    global _hashed
    if _hashed is None:
        _hashed = make_password(TEST_PASSWORD)
    return _hashed


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    first_name = factory.Faker("first_name")
    last_name = factory.Faker("last_name")
    password = factory.LazyFunction(_password_hash)

    @factory.post_generation
    def groups(self, create, extracted, **kwargs):
        if create and extracted:
            self.groups.set([Group.objects.get(name=name) for name in extracted])


class CaseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Case

    reference = factory.Sequence(lambda n: f"TST-{n:04d}")
    title = factory.Sequence(lambda n: f"Test case {n}")
    summary = "Fictional summary of a test case."


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    user = factory.SubFactory(UserFactory)
    case = factory.SubFactory(CaseFactory)
    role = Membership.Role.OBSERVER


def totp_device(user, confirmed=True):
    """An authenticator-app device for ``user`` (its key is random, as in real life)."""
    from django_otp.plugins.otp_totp.models import TOTPDevice

    return TOTPDevice.objects.create(user=user, name="phone", confirmed=confirmed)


def totp_code(device, at=None):
    """The 6-digit code the user's app would show now (or at epoch second ``at``)."""
    import time

    from django_otp.oath import TOTP

    totp = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift)
    totp.time = time.time() if at is None else at
    return f"{totp.token():0{device.digits}d}"


def register_person(case, actor, role="witness", protection_level="standard", **identity):
    """A person registered through the service, as the app does (identity encrypted)."""
    from people import services
    from people.models import Identity

    identity.setdefault("name_ar", "ليلى حسن")
    return services.register_person(
        actor=actor,
        case=case,
        role=role,
        identity=Identity(**identity),
        protection_level=protection_level,
    )
