"""VERIFY.txt: how to check the package, in plain words, in English and then in Arabic,
with the exact commands (run from the bag's folder; the same commands in both halves)."""

# ruff: noqa: RUF001, E501

VERIFY_TXT = """\
HOW TO VERIFY THIS PACKAGE ({code})
====================================

WHAT THIS IS
This folder is a disclosure package: copies of evidence files (photographs, documents,
statements) with their records: where each came from, who held it and when (the chain of
custody), and the sender's audit log of what was done to them. The checks below tell you,
without the sender's software and without trusting the sender's server, whether every
file is exactly as the sender packed it, and whether it was really the sender who packed
and signed it. The custody report (custody-report.pdf) is part of the package and is
covered by the same checks.

BEFORE YOU START (once, with a network)
a. Install Python 3, OpenSSL 3 and the GNU tools sha256sum (a usual Linux has them), and
   the Library of Congress BagIt validator: pip install bagit
b. Get the sender's key fingerprint FROM THE SENDER, not from this package: their list
   of signing keys at https://<their server>/.well-known/athar-signing-keys, or a copy
   they hand over to you (on paper, by a call you trust). It is 64 letters and digits.
   The package says its own key has the fingerprint
   {fingerprint};
   that alone proves nothing (a forger would put their own), until you find the same
   string at the sender's.
Then none of the steps below needs a network: you may disconnect.

THE CHECKS (run each from this folder, the one holding bagit.txt)
1. Is every file complete and unchanged since it was packed?

       bagit.py --validate .

   It checks every file against its SHA-256 and SHA-512 fingerprints in the bag's lists
   (always run it in full: --fast checks only sizes). It proves the files match the lists,
   not yet who made the lists.

2. The same with the standard tools, for the files and for the package's own records:

       sha256sum -c manifest-sha256.txt
       sha256sum -c tagmanifest-sha256.txt

   Every line must end in OK.

3. Is this the sender's key? Print its fingerprint and compare it, character by
   character, with the one you got from the sender in step b:

       openssl pkey -pubin -in public-key.pem -outform DER | sha256sum

   If they differ, STOP: the package was not signed by the sender's key.

4. Did that key sign the lists? The signature covers every record, the report, these
   instructions and verify.py:

       openssl pkeyutl -verify -pubin -inkey public-key.pem -rawin -in tagmanifest-sha256.txt -sigfile signature/tagmanifest-sha256.txt.sig

   It must print: Signature Verified Successfully.

5. Everything above at once, and the chain of custody and the audit log: each record's
   hash, its proof of inclusion in the sender's signed audit checkpoint, each custody
   event. Python's standard library alone; first set FINGERPRINT to the fingerprint you
   got from the sender (export FINGERPRINT=<the 64 hex digits>):

       python3 -I verify.py . --key-fingerprint $FINGERPRINT

   Its last line says OK, or FAILED naming the first file or record that does not hold.

IF A CHECK FAILS
Do not rely on the package, and do not repair it. Keep it as you received it, note which
step failed and what it printed, and ask the sender for a new copy through another
channel. A failure in steps 1, 2 or 5 means a file or record was changed, added or
removed after packing (or damaged in transit); in steps 3 or 4 (or a fingerprint
mismatch in 5), that the package was not signed by the sender's key: it may be forged.
bag-info.txt names the Athar-Version that built the package and the Verifier-SHA256 of
verify.py: compare that with the sender's published release to know verify.py is theirs.


طريقة التحقق من هذه الحزمة ({code})
====================================

ما هذه الحزمة
هذا المجلد حزمة إفصاح: نسخ من ملفات أدلة (صور ووثائق وإفادات) مع سجلاتها: مصدر كل ملف،
ومن احتفظ به ومتى (سلسلة العهدة)، وسجل التدقيق لدى المُرسِل بما جرى عليها. تبيّن لك الخطوات
التالية، دون برنامج المُرسِل ودون الثقة بخادمه، هل كل ملف مطابق تماماً لما حزمه المُرسِل،
وهل المُرسِل نفسه هو من حزمه ووقّعه. تقرير العهدة (custody-report.pdf) جزء من الحزمة،
وتشمله الخطوات نفسها.

قبل أن تبدأ (مرة واحدة، مع اتصال بالشبكة)
أ. ثبّت بايثون 3 وOpenSSL 3 وأداة sha256sum من أدوات GNU (وهي موجودة عادةً في لينكس)،
   وأداة التحقق من الحقائب التابعة لمكتبة الكونغرس: pip install bagit
ب. احصل على بصمة مفتاح المُرسِل من المُرسِل نفسه، لا من هذه الحزمة: من قائمة مفاتيح التوقيع
   المنشورة على خادمه في https://<خادم المُرسِل>/.well-known/athar-signing-keys، أو من نسخة
   يسلّمك إياها (على ورق، أو في مكالمة تثق بها). وهي 64 حرفاً ورقماً.
   تقول الحزمة إن بصمة مفتاحها هي
   {fingerprint}؛
   وهذا وحده لا يثبت شيئاً (فالمزوِّر يضع بصمة مفتاحه)، إلى أن تجد النص نفسه لدى المُرسِل.
بعد ذلك لا تحتاج أيّ خطوة مما يلي إلى الشبكة: يمكنك قطع الاتصال.

خطوات التحقق (شغّل كل أمر من هذا المجلد، المجلد الذي فيه الملف bagit.txt)
١. هل كل ملف كامل ولم يتغيّر منذ حُزم؟

       bagit.py --validate .

   تقارن كل ملف ببصمتيه SHA-256 وSHA-512 في قوائم الحقيبة (شغّلها كاملة دائماً: الخيار
   --fast لا يقارن إلا الأحجام). وهي تثبت أن الملفات مطابقة للقوائم، لا من كتب القوائم.

٢. الأمر نفسه بالأدوات القياسية، للملفات ولسجلات الحزمة نفسها:

       sha256sum -c manifest-sha256.txt
       sha256sum -c tagmanifest-sha256.txt

   يجب أن ينتهي كل سطر بكلمة OK.

٣. هل هذا مفتاح المُرسِل؟ اطبع بصمته وقارنها، حرفاً حرفاً، بالبصمة التي أخذتها من المُرسِل
   في الخطوة ب:

       openssl pkey -pubin -in public-key.pem -outform DER | sha256sum

   إن اختلفتا فتوقّف: الحزمة لم يوقّعها مفتاح المُرسِل.

٤. هل وقّع هذا المفتاح القوائم؟ يشمل التوقيع كل السجلات والتقرير وهذه التعليمات والملف
   verify.py:

       openssl pkeyutl -verify -pubin -inkey public-key.pem -rawin -in tagmanifest-sha256.txt -sigfile signature/tagmanifest-sha256.txt.sig

   يجب أن يطبع: Signature Verified Successfully.

٥. كل ما سبق دفعة واحدة، ومعه سلسلة العهدة وسجل التدقيق: بصمة كل قيد، وبرهان احتوائه في
   نقطة التدقيق التي وقّعها المُرسِل، وكل حدث من أحداث العهدة. بمكتبة بايثون القياسية وحدها؛
   اجعل أولاً قيمة FINGERPRINT البصمة التي أخذتها من المُرسِل (export FINGERPRINT=<الأرقام الست عشرية الأربعة والستون>):

       python3 -I verify.py . --key-fingerprint $FINGERPRINT

   يقول سطره الأخير OK، أو FAILED مع اسم أول ملف أو قيد لا يصح.

إذا فشلت خطوة
لا تعتمد على الحزمة ولا تحاول إصلاحها. احتفظ بها كما وصلتك، ودوّن الخطوة التي فشلت وما طبعته،
واطلب من المُرسِل نسخة جديدة عبر قناة أخرى. الفشل في الخطوات ١ أو ٢ أو ٥ يعني أن ملفاً أو قيداً
تغيّر أو أضيف أو حُذف بعد الحزم (أو تلف في الطريق)؛ والفشل في الخطوتين ٣ أو ٤ (أو اختلاف
البصمة في الخطوة ٥) يعني أن الحزمة لم يوقّعها مفتاح المُرسِل: قد تكون مزوّرة.
يذكر الملف bag-info.txt إصدار أثر الذي بنى الحزمة (Athar-Version) وبصمة SHA-256 للملف
verify.py (Verifier-SHA256): قارنها بالإصدار الذي ينشره المُرسِل لتعرف أن verify.py ملفه هو.
"""
