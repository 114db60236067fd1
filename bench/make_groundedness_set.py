"""Writes bench/data/groundedness_labelled.jsonl: hand-written answers over real sample-corpus passages.

Why a generator: the retrieved context of every item is cut from the bundled Harbourline corpus by
(document, section) reference, so passages are real and exact and a corpus edit is caught (a missing
section fails loudly). The questions and answers below are written by hand, one scenario per question,
each with answers of known kinds:

- supported: ``terse`` (a bare fact), ``paraphrase`` (fluent restatement, often combining passages),
  ``abstractive`` (correct but reworded away from the context's vocabulary, the hard positive);
- unsupported: ``changed_number`` (rich paraphrase with a figure the context does not state),
  ``misattributed_number`` (a figure the context states, but for something else), ``swapped_entity``
  (a product, place or organisation the context does not name for this), ``invented_claim`` (correct
  answer plus a fabricated extra claim), ``contradiction`` (fluent claim the context contradicts, with
  no new figure or name), ``other_document`` (a true statement from a document or section that was not
  retrieved), ``generic`` (fluent general-knowledge filler that the context does not state).

Scenarios alternate between the ``dev`` split (used to design and tune the method) and the ``test``
split (held out, reported separately by bench/validity.py).

Run: .venv/bin/python bench/make_groundedness_set.py [--check]   (--check lists figures and capitalised
words of supported answers that the context lacks, for reading the labels, and writes nothing).
"""
# ruff: noqa: E501 - one hand-written answer per line reads and diffs better than wrapped fragments

import argparse
import json
import re
from pathlib import Path

from assay.corpora import sample_data_path

OUT = Path(__file__).parent / "data" / "groundedness_labelled.jsonl"
SUPPORTED_KINDS = {"terse", "paraphrase", "abstractive"}
UNSUPPORTED_KINDS = {
    "changed_number",
    "misattributed_number",
    "swapped_entity",
    "invented_claim",
    "contradiction",
    "other_document",
    "generic",
}

# Each scenario: id, question, context ("file.md#Section", "" = text before the first heading) and
# (kind, answer) pairs written by hand against that context.
SCENARIOS: list[dict] = [
    {
        "id": "savings-rate",
        "question": "What interest rate would I get on £20,000 in the Easy Access Saver?",
        "context": ["easy-access-savings-product-sheet.md#Interest rates", "easy-access-savings-product-sheet.md#Key features"],
        "answers": [
            ("terse", "3.25% AER."),
            ("paraphrase", "A £20,000 balance falls in the £10,000 to £49,999 band, which earns 3.25% AER (3.20% gross p.a.) on the whole balance. The rate is variable, and interest is calculated daily and paid monthly."),
            ("abstractive", "Your savings would earn three and a quarter per cent annually at that level, on a rate that can go up or down."),
            ("changed_number", "A balance of £20,000 sits in the £10,000 to £49,999 tier, so the whole balance earns 3.50% AER (3.45% gross p.a.). Interest is calculated daily and paid monthly, and the rate is variable."),
            ("swapped_entity", "Balances from £10,000 to £49,999 in the Regular Saver earn 3.25% AER (3.20% gross p.a.), with interest paid monthly."),
            ("invented_claim", "You'd earn 3.25% AER on £20,000. New savers also get a bonus of 0.50% on top for the first six months."),
            ("other_document", "The Easy Access Cash ISA pays 3.60% AER (3.54% gross p.a.), variable, with interest calculated daily and paid monthly."),
            ("generic", "Savings rates depend on market conditions, so it's best to check the latest rates in the app or speak to one of our savings advisers before opening an account."),
        ],
    },
    {
        "id": "isa-flexibility",
        "question": "If I take £3,000 out of my Cash ISA, can I put it back without using up my allowance?",
        "context": ["cash-isa-product-sheet.md#At a glance", "cash-isa-product-sheet.md#Withdrawals", "fixed-rate-bond-product-sheet.md#Withdrawals and early closure"],
        "answers": [
            ("terse", "Yes, if you pay it back before 5 April in the same tax year."),
            ("paraphrase", "Yes. The Easy Access Cash ISA is a flexible ISA, so £3,000 withdrawn in, say, July can be paid back in before the following 5 April without counting towards your £20,000 annual limit. Once 5 April passes, that unused flexibility is lost."),
            ("changed_number", "Yes. Because the Easy Access Cash ISA is flexible, the £3,000 you withdraw can be replaced before the following 5 April without counting towards your £15,000 annual subscription limit."),
            ("changed_number", "Yes. Because the Cash ISA is flexible, you can replace the £3,000 at any point before 31 December and it won't count towards your £20,000 limit."),
            ("contradiction", "Yes, you can replace the £3,000 without using your £20,000 allowance, and any flexibility you don't use carries over into the next tax year."),
            ("other_document", "Withdrawals aren't allowed during the term, but you can close the account at any time and we'll pay your balance plus the interest earned to date into your current account."),
            ("generic", "ISA rules can be complicated, so it's a good idea to check your allowance carefully and speak to a financial adviser before moving money in or out."),
        ],
    },
    {
        "id": "card-balance-transfer",
        "question": "What balance transfer offer does the Classic Credit Card have?",
        "context": ["classic-credit-card-product-sheet.md#Rates and fees", "classic-credit-card-product-sheet.md#Representative example"],
        "answers": [
            ("terse", "0% for 18 months, with a 3% fee (minimum £5)."),
            ("paraphrase", "Transfers made within the first 60 days get 0% interest for 18 months from the date the account is opened. Each transfer carries a 3% fee, with a minimum of £5, and whatever is left after the promotional period is charged at the purchase rate."),
            ("abstractive", "You pay no interest on moved balances for a year and a half, provided you move them within your first sixty days, though each move costs three per cent."),
            ("changed_number", "Balance transfers made within the first 90 days get 0% interest for 24 months from the date your account is opened, with a 3% fee (minimum £5) on each transfer."),
            ("misattributed_number", "Balance transfers are charged at 0% for 18 months, with a balance transfer fee of 2.75% on each transfer."),
            ("contradiction", "You get 0% on balance transfers for 18 months, and there is no transfer fee on balances moved within the first 60 days."),
            ("other_document", "Most customers get a decision within minutes, and the money is usually paid into your account within 1 working day."),
            ("generic", "Balance transfers can be a great way to save money on interest, but make sure you understand the terms and any fees before you move a balance."),
        ],
    },
    {
        "id": "saturday-branches",
        "question": "Which branches are open on Saturdays, and when?",
        "context": ["branch-opening-hours.md#Branches open on Saturdays", "branch-opening-hours.md#Standard opening hours"],
        "answers": [
            ("terse", "Portmere Quayside, Eastwick and Millbridge, 9am to 1pm."),
            ("paraphrase", "Only three branches open on Saturdays: Portmere Quayside, Eastwick and Millbridge. They open from 9:00am to 1:00pm, in addition to their standard weekday hours, while every other branch is closed on Saturdays."),
            ("swapped_entity", "Three branches open on Saturdays from 9:00am to 1:00pm: Portmere Quayside, Eastwick and Carrow Sands."),
            ("changed_number", "Three branches, Portmere Quayside, Eastwick and Millbridge, open on Saturdays from 9:00am to 4:00pm, as well as during their standard weekday hours."),
            ("invented_claim", "Portmere Quayside, Eastwick and Millbridge open on Saturdays from 9:00am to 1:00pm. These three branches also open on Sundays from 10:00am to 2:00pm."),
            ("other_document", "Our mortgage team is available Mon.-Fri. 9:00am-7:00pm and Sat. 9:00am-1:00pm on 0800 555 0163."),
            ("generic", "Opening hours vary from branch to branch, so please check our website or call ahead before you visit at the weekend."),
        ],
    },
    {
        "id": "replacement-card",
        "question": "How much does express delivery of a replacement card cost?",
        "context": ["report-a-lost-or-stolen-card.md#Steps", "fees-and-charges-summary.md#Other services"],
        "answers": [
            ("terse", "£10, for next working day delivery."),
            ("paraphrase", "Standard delivery of a replacement card is free and takes 3-5 working days. If you need the card sooner, express delivery arrives the next working day and costs £10."),
            ("changed_number", "A replacement card is sent free by standard delivery within 3-5 working days; if you need it faster, express delivery arrives the next working day and costs £20."),
            ("misattributed_number", "Express delivery of a replacement card costs £15 and arrives the next working day."),
            ("invented_claim", "Express delivery costs £10 and arrives the next working day. The fee is waived for Plus Current Account customers."),
            ("other_document", "Tracing, amending or recalling an international payment costs £15, and receiving one costs £7 unless it's under £100."),
            ("generic", "Delivery charges depend on the service you choose, and our team will confirm any cost with you before your new card is sent out."),
        ],
    },
    {
        "id": "switch-bonus",
        "question": "What do I need to do to get the switching bonus?",
        "context": ["switch-your-current-account.md#Switching bonus", "switch-your-current-account.md#The switch guarantee"],
        "answers": [
            ("terse", "Complete a full switch, pay in £1,500 within 60 days and have 2 active direct debits."),
            ("paraphrase", "You'll get £150 if you switch fully using the Account Switch Service, closing your old account. Within 60 days of the switch date you need to pay in at least £1,500 and have at least two active direct debits on your Harbourline account. The bonus is paid within 28 days of meeting these conditions."),
            ("changed_number", "We pay a £200 bonus when you complete a full switch with the Account Switch Service. You must pay in at least £1,500 within 60 days of the switch date and have at least 2 active direct debits, and the bonus is paid within 28 days."),
            ("swapped_entity", "You'll get the £150 bonus if you open a Regular Saver, complete a full switch and pay in at least £1,500 within 60 days."),
            ("invented_claim", "Complete a full switch, pay in at least £1,500 within 60 days and have 2 active direct debits, and we'll pay you £150. Customers who switch a joint account receive the bonus twice."),
            ("other_document", "New businesses, and businesses switching to us from another bank, get 18 months of free day-to-day banking, after which the account costs £6.50 per month."),
            ("generic", "Switching bonuses usually come with conditions, such as paying in a minimum amount each month, so read the offer terms carefully before you switch."),
        ],
    },
    {
        "id": "loan-repayment",
        "question": "What would I repay each month on a £10,000 loan over 5 years?",
        "context": ["personal-loan-product-sheet.md#Representative rates", "personal-loan-product-sheet.md#Loan amounts and terms"],
        "answers": [
            ("terse", "£194.35 a month, at 6.4% APR representative."),
            ("paraphrase", "Based on the representative example, a £10,000 loan over 60 months at 6.4% APR would cost £194.35 a month, with £11,661.00 payable in total. The rate is fixed, so the repayment never changes."),
            ("changed_number", "Borrowing £10,000 over 60 months at a representative 6.4% APR means 60 monthly repayments of £199.35, so the total amount payable would be £11,961.00."),
            ("misattributed_number", "For £10,000 over 60 months the representative rate is 12.9% APR, giving monthly repayments of £194.35."),
            ("invented_claim", "You'd pay £194.35 a month for 60 months. An arrangement fee of £50 is also added to the loan."),
            ("other_document", "A £200,000 repayment mortgage over 25 years at 4.49% would cost approx. £1,110.53 a month during the 2-year fixed period."),
            ("generic", "Your monthly repayment will depend on the amount you borrow, the term you choose and the rate you're offered, so use our loan calculator to get a personalised quote."),
        ],
    },
    {
        "id": "mortgage-overpayment",
        "question": "Can I overpay my 5-Year Fixed mortgage without paying a charge?",
        "context": ["mortgage-product-sheet.md#Early repayment charges", "mortgage-product-sheet.md#Current fixed-rate products"],
        "answers": [
            ("terse", "Yes, up to 10% of the outstanding balance each calendar year."),
            ("paraphrase", "Yes. Each calendar year you can overpay up to 10% of your outstanding balance without an early repayment charge. If you overpay more than that during the 5-Year Fixed period, the ERC is 5% in year 1, 4% in year 2, 3% in year 3, 2% in year 4 and 1% in year 5."),
            ("changed_number", "Yes. You can overpay up to 20% of your outstanding balance each calendar year without an ERC; beyond that, the 5-Year Fixed charges 5% in year 1, falling to 1% in year 5."),
            ("misattributed_number", "Yes, you can overpay up to 10% of your balance each year, but on the 5-Year Fixed any larger overpayment costs 2% in year 1 and 1% in year 2."),
            ("invented_claim", "Yes, you can overpay up to 10% a year without a charge, and overpayments can be taken back out later as a payment holiday."),
            ("other_document", "If you repay early, we may charge up to 58 days' interest on the amount repaid, and a settlement figure is valid for 28 days."),
            ("generic", "Many mortgages let you make overpayments, but limits and charges vary, so check your mortgage offer or talk to your lender before paying extra."),
        ],
    },
    {
        "id": "stolen-card-refund",
        "question": "Will I get my money back if someone uses my stolen card?",
        "context": ["fraud-liability-policy.md#Unauthorised transactions", "fraud-liability-policy.md#Scams where you made the payment"],
        "answers": [
            ("terse", "Yes, by the end of the next working day, though you may have to pay the first £35."),
            ("paraphrase", "Generally yes. Once you report an unauthorised transaction, it is refunded by the end of the next working day and your account is put back as it would have been. If the card was used before you told the bank, you may be liable for the first £35 of losses, and you must report it no later than 13 months after the transaction."),
            ("changed_number", "Yes. Unauthorised transactions are refunded by the end of the next working day after you report them, although if the card was used before you told us you may be liable for the first £50 of losses. You must report it within 18 months."),
            ("invented_claim", "Yes, we'll refund it by the end of the next working day. We'll also add a £25 goodwill payment for the inconvenience."),
            ("swapped_entity", "Yes. Meridian Shield Insurance refunds unauthorised card transactions by the end of the next working day, minus the first £35."),
            ("other_document", "You should raise a dispute within 120 days of the transaction date, and we aim to resolve most disputes within 45 days."),
            ("generic", "Banks usually protect customers against card fraud, so contact your bank as soon as possible and they'll investigate what happened."),
        ],
    },
    {
        "id": "overdraft-interest",
        "question": "How much interest would I pay on a £1,000 overdraft for 30 days with an Everyday Current Account?",
        "context": ["overdraft-fees-policy.md#How interest is worked out", "overdraft-fees-policy.md#One simple rate"],
        "answers": [
            ("terse", "About £25.18."),
            ("paraphrase", "Roughly £25.18. The first £100 of an Everyday Current Account overdraft is interest-free, so interest at 39.9% EAR is only charged on the remaining £900 over those 30 days."),
            ("changed_number", "About £27.40. The first £100 is interest-free on the Everyday Current Account, so you'd pay 39.9% EAR on the other £900 for the 30 days."),
            ("misattributed_number", "You'd pay approx. £20.99, because the first £100 of your arranged overdraft is interest-free and the rest is charged at 39.9% EAR."),
            ("invented_claim", "You'd pay about £25.18 in interest, plus a £5 monthly overdraft usage fee."),
            ("other_document", "An arrangement fee of 1% of the agreed limit applies (minimum £50), and interest is charged at 12.9% EAR (variable)."),
            ("generic", "Overdraft costs vary between banks, so compare the rates on offer and speak to a debt adviser if your borrowing is getting out of hand."),
        ],
    },
    {
        "id": "complaint-deadline",
        "question": "How long does the bank have to send a final response to my complaint?",
        "context": ["complaints-handling-policy.md#What happens next", "complaints-handling-policy.md#If you're not happy with our response"],
        "answers": [
            ("terse", "8 weeks, or 15 working days for complaints about payment services."),
            ("paraphrase", "You'll get a final response within eight weeks of the bank receiving your complaint. Complaints about payment services, such as card payments or transfers, are answered within 15 working days, or within 35 working days in exceptional circumstances."),
            ("changed_number", "We'll send our final response within 6 weeks of receiving your complaint, or within 10 working days for complaints about payment services such as card payments."),
            ("swapped_entity", "Within 8 weeks. If you're unhappy with the response, you can refer your complaint to the Financial Ombudsman Service within 6 months."),
            ("invented_claim", "We'll send our final response within 8 weeks. If we miss that deadline, we automatically pay you £100 in compensation."),
            ("other_document", "Subject access requests are free and we'll respond within one month, which may be extended by up to two further months if your request is complex."),
            ("generic", "Most complaints are resolved quickly, and our customer service team will do everything they can to sort out your problem as soon as possible."),
        ],
    },
    {
        "id": "sepa-fee",
        "question": "How much does it cost to send euros to a SEPA country?",
        "context": ["send-an-international-payment.md#Fees", "send-an-international-payment.md#Limits and timings"],
        "answers": [
            ("terse", "£5."),
            ("paraphrase", "Sending euros to a SEPA country costs £5, compared with £20 for other international payments sent through SWIFT. SEPA payments usually arrive the next working day."),
            ("changed_number", "A euro payment to a SEPA country costs £3, while SWIFT payments in other currencies cost £25; SEPA payments usually arrive the next working day."),
            ("swapped_entity", "Euro payments to a SEPA country cost £5 when sent by CHAPS, and they arrive the same day."),
            ("misattributed_number", "It costs £5 to send euros to a SEPA country, and SEPA payments usually take 2-4 working days to arrive."),
            ("other_document", "CHAPS same-day payments cost £25 each, and cheques paid in or issued cost 50p each."),
            ("generic", "International transfer fees depend on the destination and currency, and the receiving bank may also take a fee, so check the full cost before you confirm."),
        ],
    },
    {
        "id": "baggage-cover",
        "question": "How much baggage cover does the travel insurance give?",
        "context": ["travel-insurance-product-sheet.md#What's covered", "travel-insurance-product-sheet.md#Optional extras"],
        "answers": [
            ("terse", "Up to £2,000, with a £300 single-item limit."),
            ("paraphrase", "Baggage is covered up to £2,000 in total, but any single item is limited to £300. An excess of £75 per person applies to each claim under most sections."),
            ("changed_number", "Baggage is covered up to £2,500, with a single-item limit of £500, and an excess of £75 per person applies to each claim."),
            ("invented_claim", "Baggage is covered up to £2,000 with a £300 limit per item, and lost baggage claims are paid within 48 hours."),
            ("swapped_entity", "Baggage cover is up to £2,000 (single-item limit £300), and it is underwritten by Atlas Mutual Insurance."),
            ("other_document", "Mobile phone insurance covers up to four handsets in your household for loss, theft, damage and breakdown, with a £50 excess per claim."),
            ("generic", "Baggage cover protects your belongings if they're lost, stolen or damaged while you're away, so keep receipts for any valuable items you take with you."),
        ],
    },
    {
        "id": "reset-code",
        "question": "How long is the password reset security code valid for?",
        "context": ["reset-online-banking-password.md#Steps", "reset-online-banking-password.md#Locked out?"],
        "answers": [
            ("terse", "10 minutes."),
            ("paraphrase", "The 6-digit security code sent by text message to your registered mobile number is valid for 10 minutes. If it has expired, you can request a new one."),
            ("abstractive", "It expires ten minutes after we text it to you, and you can simply ask for another."),
            ("changed_number", "The 6-digit security code sent by text to your registered mobile stays valid for 30 minutes; if it runs out, you can request a new code on screen."),
            ("changed_number", "The 8-digit security code we email to you is valid for 10 minutes."),
            ("invented_claim", "The code is valid for 10 minutes. If you can't receive texts, our staff can read the code out to you over the phone."),
            ("other_document", "Your debit card will arrive by post within 5 working days, and your PIN usually arrives 2 days after the card."),
            ("generic", "Security codes expire after a short time for your protection, so enter the code as soon as you receive it and never share it with anyone."),
        ],
    },
    {
        "id": "regular-saver-limits",
        "question": "How much can I pay into the Regular Saver?",
        "context": ["regular-saver-product-sheet.md#Paying in", "regular-saver-product-sheet.md#Interest"],
        "answers": [
            ("terse", "Between £25 and £250 a month."),
            ("paraphrase", "You can save between £25 and £250 each calendar month by standing order from your Harbourline current account. Unused allowance can't be carried forward, so the most you can pay in over the term is £3,000."),
            ("changed_number", "You can pay in between £25 and £500 each calendar month by standing order, up to a maximum of £6,000 over the 12-month term."),
            ("invented_claim", "You can pay in £25 to £250 each month, and you can also make one-off lump sum deposits of up to £1,000 at any time."),
            ("swapped_entity", "You can pay in £25 to £250 each calendar month by standing order from your Harbourline Cash ISA."),
            ("other_document", "The annual subscription limit is £20,000 per tax year, shared across all the ISAs you pay into."),
            ("generic", "Regular savings accounts help you build a habit by saving a fixed amount every month, and they usually pay a higher rate than easy access accounts."),
        ],
    },
    {
        "id": "call-recordings",
        "question": "How long do you keep recordings of my phone calls?",
        "context": ["record-retention-policy.md#Standard retention periods", "record-retention-policy.md#Why different periods?"],
        "answers": [
            ("terse", "5 years from the date of the call."),
            ("paraphrase", "Call recordings are kept for five years, counted from the date of the call. By comparison, online chat transcripts are kept for 2 years."),
            ("abstractive", "Phone conversations are retained for half a decade."),
            ("changed_number", "Call recordings are kept for 7 years from the date of the call, while online chat transcripts are kept for 2 years."),
            ("misattributed_number", "Call recordings are kept for 6 years after your relationship with us ends."),
            ("invented_claim", "Call recordings are kept for 5 years from the date of the call, and you can listen back to any of them in the app."),
            ("other_document", "Customer services is open Mon.-Fri. 8:00am-8:00pm and Sat. 9:00am-5:00pm, and calls to 0800 numbers are free from UK landlines and mobiles."),
            ("generic", "Banks record calls for training and quality purposes, and recordings are stored securely for as long as regulations require."),
        ],
    },
    {
        "id": "stolen-card-abroad",
        "question": "What number do I call to report a stolen card from abroad?",
        "context": ["contact-us.md#Phone numbers", "contact-us.md#Calling from abroad"],
        "answers": [
            ("terse", "+44 20 7946 0199."),
            ("paraphrase", "From abroad, call the lost and stolen cards line on +44 20 7946 0199. The usual number is 0800 555 0199, and the line is open 24 hours a day, 7 days a week. Calls from abroad are charged at your network's international rates."),
            ("changed_number", "If you're abroad, call the lost and stolen cards line on +44 20 7946 0188; it's open 24 hours a day, 7 days a week."),
            ("misattributed_number", "From abroad, call +44 20 7946 0150, which is the 24-hour line for lost and stolen cards."),
            ("contradiction", "Call +44 20 7946 0199 from abroad. Calls to this number are free from any country."),
            ("other_document", "Forward suspicious emails or texts that claim to be from us to phishing@harbourline-bank.example, then delete them."),
            ("generic", "If you're abroad and your card is stolen, contact your bank immediately using the number on the back of your card or on its website."),
        ],
    },
    {
        "id": "step-free-access",
        "question": "Do your branches have step-free access?",
        "context": ["accessibility-policy.md#In our branches", "accessibility-policy.md#By phone"],
        "answers": [
            ("terse", "41 of the 46 branches do."),
            ("paraphrase", "Not all of them. 41 of the 46 branches have step-free access, and at the other 5 branches staff can come out to meet you by arrangement. Every branch also has a hearing loop at the counter."),
            ("changed_number", "Most do: 43 of our 46 branches have step-free access, and at the remaining 3 branches staff can come out to meet you by arrangement."),
            ("invented_claim", "41 of our 46 branches have step-free access, and we offer free taxi transport to the nearest accessible branch for customers who need it."),
            ("contradiction", "All 46 branches have step-free access, as well as hearing loops at the counter."),
            ("other_document", "Our website and app are designed to meet the WCAG 2.2 AA accessibility standard and support text resizing up to 200%."),
            ("generic", "We're committed to making our branches accessible to everyone, and we're always working to improve access for customers with disabilities."),
        ],
    },
    {
        "id": "bond-minimum",
        "question": "What's the minimum deposit for a Fixed Rate Bond?",
        "context": ["fixed-rate-bond-product-sheet.md#How it works", "fixed-rate-bond-product-sheet.md#Terms and rates"],
        "answers": [
            ("terse", "£1,000."),
            ("paraphrase", "You need at least £1,000 to open a Fixed Rate Bond, and you can deposit up to £500,000. The bond has to be funded with a single payment within 14 days of opening."),
            ("abstractive", "A thousand pounds is the least you can put in, paid in one go within a fortnight of opening."),
            ("changed_number", "The minimum deposit is £5,000 and the maximum is £500,000, paid as a single payment within 14 days of opening."),
            ("contradiction", "The minimum deposit is £1,000, and you can top up the bond with further deposits at any time during the term."),
            ("swapped_entity", "The minimum deposit for the 3-Year Fixed Rate Bond is £1,000, and it pays 4.25% AER."),
            ("other_document", "The minimum to open is £1, and the annual subscription limit is £20,000 per tax year."),
            ("generic", "Fixed-rate bonds usually need a larger minimum deposit than easy access accounts, in return for a better rate of interest."),
        ],
    },
    {
        "id": "cash-deposit-source",
        "question": "Will I need to explain where a large cash deposit came from?",
        "context": ["anti-money-laundering-and-kyc-policy.md#Source of funds", "anti-money-laundering-and-kyc-policy.md#Verifying your identity"],
        "answers": [
            ("terse", "Yes, for cash deposits of £10,000 or more."),
            ("paraphrase", "Yes. For cash deposits of £10,000 or more, whether paid in at once or in several deposits within 30 days, the bank will ask for evidence of the source of funds, such as a sale receipt or a letter from a solicitor."),
            ("changed_number", "Yes. For cash deposits of £5,000 or more, whether paid in at once or spread over several deposits within 30 days, we'll ask for evidence of where the money came from, such as a sale receipt or a solicitor's letter."),
            ("invented_claim", "Yes, for deposits of £10,000 or more. We also report every such deposit to HM Revenue & Customs."),
            ("changed_number", "Yes. For cash deposits of £10,000 or more within 90 days, we'll ask for evidence such as a mobile phone bill."),
            ("other_document", "Cash paid in at a branch is charged at 70p per £100 after the free banking period."),
            ("generic", "Banks are legally required to check large deposits to prevent money laundering, so keep receipts or paperwork that show where your money came from."),
        ],
    },
    {
        "id": "dispute-time-limit",
        "question": "How long do I have to dispute a card payment?",
        "context": ["dispute-a-card-transaction.md#Time limits", "dispute-a-card-transaction.md#Steps"],
        "answers": [
            ("terse", "120 days from the transaction date."),
            ("paraphrase", "Raise the dispute within 120 days of the transaction. If the goods or services were due later, the 120 days run from the date you expected to receive them. It's best to contact the merchant first and give them 14 days to sort it out."),
            ("changed_number", "You should raise a dispute within 180 days of the transaction date, or of the date you expected the goods or services if that was later."),
            ("misattributed_number", "You have 45 days from the transaction date to raise a dispute."),
            ("contradiction", "You have 120 days from the transaction date, and disputes raised after that are still always accepted by the card scheme."),
            ("other_document", "You must tell us without undue delay, and no later than 13 months after the transaction was taken from your account."),
            ("generic", "Time limits for disputes are set by the card schemes and can vary, so raise any problem with your bank as soon as you notice it."),
        ],
    },
    {
        "id": "standing-order-maximum",
        "question": "What's the maximum amount for a standing order?",
        "context": ["set-up-a-standing-order.md#Steps in the app", "set-up-a-standing-order.md#Changing or cancelling"],
        "answers": [
            ("terse", "£10,000 per payment."),
            ("paraphrase", "Each standing order payment can be between £1 and £10,000. You can pay weekly, monthly, quarterly or annually, and the earliest first payment date is the next working day."),
            ("changed_number", "Each payment can be between £1 and £25,000, and you can choose weekly, monthly, quarterly or annual payments."),
            ("invented_claim", "The maximum is £10,000 per payment, but you can raise it to £50,000 by calling us."),
            ("contradiction", "Standing orders can be up to £10,000 per payment, and the organisation you're paying can change the amount whenever it needs to."),
            ("other_document", "Faster Payments from the app or online banking are limited to £10,000 per day, and debit card purchases to £5,000 per day."),
            ("generic", "Standing order limits depend on your bank and account type, so check your online banking for the current limit before setting one up."),
        ],
    },
    {
        "id": "business-overdraft",
        "question": "What does a business overdraft cost?",
        "context": ["business-current-account-product-sheet.md#Business overdraft", "business-current-account-product-sheet.md#Monthly fee"],
        "answers": [
            ("terse", "12.9% EAR variable, plus a 1% arrangement fee (minimum £50)."),
            ("paraphrase", "Business overdrafts from £1,000 to £25,000 are available, subject to status. There's an arrangement fee of 1% of the agreed limit, at least £50, and interest at 12.9% EAR (variable). The limit is reviewed every 12 months."),
            ("changed_number", "Overdrafts from £1,000 to £25,000 are available, with an arrangement fee of 2% of the agreed limit (minimum £100) and interest at 12.9% EAR, variable."),
            ("swapped_entity", "Business overdrafts cost 12.9% EAR and come with the same £250 interest-free buffer as the Plus Current Account."),
            ("invented_claim", "Interest is 12.9% EAR with a 1% arrangement fee (minimum £50). The arrangement fee is waived during the 18-month free banking period."),
            ("other_document", "Arranged overdrafts cost 39.9% EAR (variable), with an interest-free buffer of £100 on the Everyday Current Account."),
            ("generic", "Business overdraft costs depend on your company's circumstances and credit history, and our business team can give you a personalised quote."),
        ],
    },
    {
        "id": "plus-travel-cover",
        "question": "Does the Plus Current Account include travel insurance?",
        "context": ["plus-current-account-product-sheet.md#What's included", "plus-current-account-product-sheet.md#Eligibility", "travel-insurance-product-sheet.md#Prices"],
        "answers": [
            ("terse", "Yes, worldwide family annual travel insurance."),
            ("paraphrase", "Yes. It comes with worldwide family annual travel insurance for you, your partner and dependent children under 18 who travel with you. Each trip can last up to 31 days, and policyholders must be aged 79 or under."),
            ("changed_number", "Yes, the Plus Current Account includes worldwide family annual travel cover for you, your partner and children under 18, with trips of up to 45 days each for policyholders aged 75 or under."),
            ("swapped_entity", "Yes, the Everyday Current Account includes worldwide family annual travel insurance, covering trips of up to 31 days."),
            ("invented_claim", "Yes, it includes worldwide family annual travel insurance, and winter sports cover is included at no extra cost."),
            ("other_document", "Winter sports cover can be added for £25 per policy, and gadget cover for phones, tablets and laptops for £20."),
            ("generic", "Packaged bank accounts often include travel insurance, but cover levels vary, so check the policy documents to see whether it meets your needs."),
        ],
    },
    {
        "id": "agreement-in-principle",
        "question": "How long is an Agreement in Principle valid for?",
        "context": ["apply-for-a-mortgage.md#Steps"],
        "answers": [
            ("terse", "90 days."),
            ("paraphrase", "An Agreement in Principle lasts for 90 days. Getting one takes approx. 15 minutes and uses a soft credit search, so it won't affect your credit score."),
            ("changed_number", "An Agreement in Principle is valid for 60 days, takes around 15 minutes and uses a soft credit search that won't affect your credit score."),
            ("misattributed_number", "An Agreement in Principle is valid for 6 months."),
            ("invented_claim", "An AIP is valid for 90 days, and it guarantees that we will lend you the amount shown."),
            ("other_document", "Existing Harbourline mortgage customers can switch to a new product in the app from 4 months before their current deal ends."),
            ("generic", "An agreement in principle gives you an idea of how much you could borrow, which can help show estate agents that you're a serious buyer."),
        ],
    },
    {
        "id": "closing-balance",
        "question": "How quickly will I get my money after closing my account?",
        "context": ["close-an-account.md#Steps", "close-an-account.md#Joint accounts"],
        "answers": [
            ("terse", "Within 2 working days."),
            ("paraphrase", "Once you confirm the closure, the remaining balance, plus any interest due, is sent to another account in your name within 2 working days. Your closing statement follows within 5 working days."),
            ("changed_number", "After you confirm the closure, we'll send the remaining balance and any interest due to another account in your name within 7 working days, and your closing statement will arrive within 10 working days."),
            ("invented_claim", "We'll send the remaining balance within 2 working days. A £10 closure fee is deducted from the balance first."),
            ("contradiction", "The remaining balance is sent within 2 working days to any account you choose, including an account in someone else's name."),
            ("other_document", "The bonus is paid within 28 days of meeting these conditions, and it's limited to one bonus per customer."),
            ("generic", "Closing an account usually takes a few days, and any remaining money will be transferred once all pending transactions have cleared."),
        ],
    },
    {
        "id": "cash-machine-limit",
        "question": "How much cash can I take out of a cash machine each day with the Everyday Current Account?",
        "context": ["everyday-current-account-product-sheet.md#Limits", "everyday-current-account-product-sheet.md#Key facts", "branch-opening-hours.md#Cash machines"],
        "answers": [
            ("terse", "£500 a day."),
            ("paraphrase", "Cash machine withdrawals are limited to £500 per day. You can lower this limit yourself in the app under Cards > Spending controls, but raising a limit has to be requested by phone or in branch."),
            ("abstractive", "Five hundred pounds daily at ATMs."),
            ("changed_number", "Cash machine withdrawals are limited to £300 per day, and you can lower this limit yourself in the app under Cards > Spending controls."),
            ("misattributed_number", "You can withdraw up to £5,000 a day from cash machines with the Everyday Current Account."),
            ("invented_claim", "You can take out up to £500 a day, and withdrawals from other banks' cash machines are charged at £1.50 each."),
            ("other_document", "For cash withdrawals abroad, a further £1.50 per withdrawal is charged on top of the 2.75% non-sterling transaction fee."),
            ("generic", "Daily cash limits help protect you from fraud, and you can usually ask your bank to change them if you need more cash."),
        ],
    },
    {
        "id": "subject-access-request",
        "question": "How long do you take to answer a subject access request?",
        "context": ["data-privacy-notice.md#Your rights", "data-privacy-notice.md#Who we share it with"],
        "answers": [
            ("terse", "One month."),
            ("paraphrase", "Subject access requests are free, and the bank responds within one month. For complex requests it can extend this by up to two further months, but it will tell you why within the first month."),
            ("abstractive", "You'll normally hear back within a month at no cost; tricky requests can take up to three months in total, with an explanation early on."),
            ("changed_number", "Subject access requests are free, and we'll respond within 30 days, or within 90 days if the request is complex."),
            ("invented_claim", "Subject access requests are free and answered within one month. You can also download a full copy of your data instantly in the app under Profile."),
            ("swapped_entity", "Subject access requests are handled by Meridian Shield Insurance Ltd. and answered within one month."),
            ("other_document", "Complaint files are kept for 6 years after the complaint is closed, and call recordings for 5 years."),
            ("generic", "Under data protection law you have the right to see the information organisations hold about you, and most requests are handled quickly."),
        ],
    },
]


def document_sections(path: Path) -> tuple[str, dict[str, str]]:
    """Title and heading -> body of one Markdown document ("" is the text before the first heading)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    title = lines[0].lstrip("#").strip()
    sections: dict[str, list[str]] = {"": []}
    current = ""
    for line in lines[1:]:
        if line.startswith("## "):
            current = line[3:].strip()
            sections[current] = []
        else:
            sections[current].append(line)
    return title, {heading: "\n".join(body).strip() for heading, body in sections.items()}


def passage(corpus: Path, reference: str) -> str:
    """The chunk text for ``file.md#Heading``: title line, heading and body, as the sample chunker lays out."""
    file_name, _, heading = reference.partition("#")
    title, sections = document_sections(corpus / file_name)
    if heading not in sections:
        raise KeyError(f"{file_name}: no section {heading!r}; sections are {sorted(sections)}")
    body = sections[heading]
    return f"{title}\n## {heading}\n{body}" if heading else f"{title}\n{body}"


def build_items(corpus: Path) -> list[dict]:
    items = []
    for number, scenario in enumerate(SCENARIOS, start=1):
        context = [passage(corpus, reference) for reference in scenario["context"]]
        for index, (kind, answer) in enumerate(scenario["answers"]):
            if kind not in SUPPORTED_KINDS | UNSUPPORTED_KINDS:
                raise ValueError(f"scenario {scenario['id']}: unknown answer kind {kind!r}")
            items.append(
                {
                    "id": f"{scenario['id']}-{index:02d}-{kind}",
                    "scenario": scenario["id"],
                    "split": "dev" if number % 2 else "test",
                    "question": scenario["question"],
                    "context_refs": list(scenario["context"]),
                    "context": context,
                    "answer": answer,
                    "kind": kind,
                    "label": "supported" if kind in SUPPORTED_KINDS else "unsupported",
                }
            )
    return items


_FIGURE = re.compile(r"\d[\d,.:]*")
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][A-Za-z]+")


def check(items: list[dict]) -> None:
    """Print, for each supported answer, figures and mid-sentence capitalised words absent from its context."""
    for item in items:
        if item["label"] != "supported":
            continue
        context = " ".join(item["context"]).replace(",", "")
        figures = [f for f in _FIGURE.findall(item["answer"]) if f.rstrip(".,:").replace(",", "") not in context]
        names = [word for word in _CAPITALISED.findall(item["answer"]) if word not in context]
        if figures or names:
            print(f"{item['id']}: figures {figures} names {names}\n    {item['answer']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="list label doubts instead of writing the file")
    args = parser.parse_args()
    items = build_items(sample_data_path() / "corpus")
    if args.check:
        check(items)
        return
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as handle:
        for item in items:
            handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    supported = sum(item["label"] == "supported" for item in items)
    print(f"wrote {len(items)} items ({supported} supported, {len(items) - supported} unsupported) to {OUT}")


if __name__ == "__main__":
    main()
