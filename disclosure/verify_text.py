"""VERIFY.txt: how to check the package, in English and Arabic, with the exact
commands (run from the bag's folder)."""

# ruff: noqa: RUF001, E501

VERIFY_TXT = """\
HOW TO VERIFY THIS PACKAGE ({code})
====================================

Run these from the folder this package was unpacked into (the one holding bagit.txt).
None of them needs Athar or a network connection.

1. The bag, with the Library of Congress validator (pip install bagit); always in full:

       bagit.py --validate .

2. Every payload file against its SHA-256 (GNU coreutils), and the tag files:

       sha256sum -c manifest-sha256.txt
       sha256sum -c tagmanifest-sha256.txt

3. The sender's Ed25519 signature over tagmanifest-sha256.txt (OpenSSL 3):

       openssl pkeyutl -verify -pubin -inkey public-key.pem -rawin -in tagmanifest-sha256.txt -sigfile signature/tagmanifest-sha256.txt.sig

   Compare the public key with the one the sender publishes. Its fingerprint is
   {fingerprint}; compute it yourself with:

       openssl pkey -pubin -in public-key.pem -outform DER | sha256sum

4. All of the above, the signed audit checkpoint, every audit entry's Merkle inclusion
   proof and every item's chain of custody, with Python's standard library alone:

       python3 -I verify.py .

Each prints a success line, or names the first file or entry that fails.


طريقة التحقق من هذه الحزمة ({code})
====================================

شغّل هذه الأوامر من المجلد الذي فُكّت فيه الحزمة (المجلد الذي فيه الملف bagit.txt).
لا يحتاج أيّ منها إلى أثر ولا إلى اتصال بالشبكة.

١. الحقيبة، بأداة التحقق التابعة لمكتبة الكونغرس (pip install bagit)، تحققاً كاملاً دائماً:

       bagit.py --validate .

٢. كل ملف من ملفات المحتوى مقابل بصمته SHA-256، ثم ملفات الوسوم:

       sha256sum -c manifest-sha256.txt
       sha256sum -c tagmanifest-sha256.txt

٣. توقيع المُرسِل من نوع Ed25519 على الملف tagmanifest-sha256.txt (OpenSSL 3):

       openssl pkeyutl -verify -pubin -inkey public-key.pem -rawin -in tagmanifest-sha256.txt -sigfile signature/tagmanifest-sha256.txt.sig

   قارن المفتاح العام بالمفتاح الذي ينشره المُرسِل. بصمته هي
   {fingerprint}، واحسبها بنفسك بالأمر:

       openssl pkey -pubin -in public-key.pem -outform DER | sha256sum

٤. كل ما سبق، ونقطة التدقيق الموقّعة، وبرهان الاحتواء في شجرة ميركل لكل قيد في سجل
   التدقيق، وسلسلة العهدة لكل مادة، بمكتبة بايثون القياسية وحدها:

       python3 -I verify.py .

يطبع كل أمر سطر نجاح، أو يسمّي أول ملف أو قيد لا يصح.
"""
