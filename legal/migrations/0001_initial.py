"""legal takes over the review decisions people kept (same table, same rows: the audit
chain binds them by the table's name) and opens them to evidence items, with the hash of
what each decision was about."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import casefiles.db

STATUSES = [
    ("draft", "New"),
    ("submitted", "Submitted"),
    ("approved", "Approved"),
    ("returned", "Returned"),
    ("rejected", "Rejected"),
]


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("people", "0006_review_moves_to_legal"),
        ("evidence", "0010_review_statuses"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ReviewDecision",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("from_status", models.CharField(choices=STATUSES, max_length=16)),
                        ("to_status", models.CharField(choices=STATUSES, max_length=16)),
                        ("at", models.DateTimeField(auto_now_add=True)),
                        ("comment", models.TextField(blank=True, verbose_name="comment")),
                        (
                            "actor",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "testimony",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="decisions",
                                to="people.testimony",
                            ),
                        ),
                    ],
                    options={"ordering": ["at", "pk"], "db_table": "people_reviewdecision"},
                ),
            ],
            database_operations=[],
        ),
        migrations.AlterField(
            model_name="reviewdecision",
            name="testimony",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="decisions",
                to="people.testimony",
            ),
        ),
        migrations.AddField(
            model_name="reviewdecision",
            name="item",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="decisions",
                to="evidence.evidenceitem",
            ),
        ),
        migrations.AddField(
            model_name="reviewdecision",
            name="sha256",
            field=models.CharField(blank=True, default="", max_length=64),
            preserve_default=False,
        ),
        migrations.AddConstraint(
            model_name="reviewdecision",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("item__isnull", True), ("testimony__isnull", True), _connector="XOR"
                ),
                name="decision_on_item_or_testimony",
            ),
        ),
        migrations.AddIndex(
            model_name="reviewdecision",
            index=models.Index(fields=["item", "id"], name="decision_item_latest"),
        ),
        casefiles.db.AdoptAppendOnly("ReviewDecision"),
    ]
